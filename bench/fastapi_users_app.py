"""fastapi-users, set up as its documentation's full example (SQLAlchemy, JWT), for bench/run.py.

Runs in its own virtual environment (bench/run.py creates it under a temporary folder and
installs fastapi-users[sqlalchemy], aiosqlite, uvicorn[standard], uvicorn-worker and gunicorn),
under gunicorn with uvicorn workers:

    gunicorn --worker-class uvicorn_worker.UvicornWorker --workers 2 fastapi_users_app:app

Routes (the documented ones): POST /auth/jwt/login (form-encoded username and password),
POST /auth/register, GET /users/me (bearer token) and the rest of the users router.

The database (SQLite through aiosqlite) is BENCH_FASTAPI_USERS_DB. The tables are created by
`python fastapi_users_app.py` before the server starts: with two workers, both running the
documented start-up hook at once could race on CREATE TABLE. The hook stays, as documented.
The password hash is fastapi-users' default (its PasswordHelper: pwdlib, argon2 first).
"""

import asyncio
import os
import uuid
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi_users import BaseUserManager, FastAPIUsers, UUIDIDMixin, schemas
from fastapi_users.authentication import AuthenticationBackend, BearerTransport, JWTStrategy
from fastapi_users.db import SQLAlchemyBaseUserTableUUID, SQLAlchemyUserDatabase
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

DATABASE_URL = f"sqlite+aiosqlite:///{os.environ['BENCH_FASTAPI_USERS_DB']}"
SECRET = os.environ["BENCH_FASTAPI_USERS_SECRET"]


# db.py


class Base(DeclarativeBase):
    pass


class User(SQLAlchemyBaseUserTableUUID, Base):
    pass


engine = create_async_engine(DATABASE_URL)
async_session_maker = async_sessionmaker(engine, expire_on_commit=False)


async def create_db_and_tables() -> None:
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)


async def get_async_session() -> AsyncGenerator[AsyncSession, None]:
    async with async_session_maker() as session:
        yield session


async def get_user_db(session: AsyncSession = Depends(get_async_session)):  # noqa: B008
    yield SQLAlchemyUserDatabase(session, User)


# schemas.py


class UserRead(schemas.BaseUser[uuid.UUID]):
    pass


class UserCreate(schemas.BaseUserCreate):
    pass


class UserUpdate(schemas.BaseUserUpdate):
    pass


# users.py (the documented example's hooks only print; they are left out)


class UserManager(UUIDIDMixin, BaseUserManager[User, uuid.UUID]):
    reset_password_token_secret = SECRET
    verification_token_secret = SECRET


async def get_user_manager(user_db: SQLAlchemyUserDatabase = Depends(get_user_db)):  # noqa: B008
    yield UserManager(user_db)


bearer_transport = BearerTransport(tokenUrl="auth/jwt/login")


def get_jwt_strategy() -> JWTStrategy:
    return JWTStrategy(secret=SECRET, lifetime_seconds=3600)


auth_backend = AuthenticationBackend(
    name="jwt",
    transport=bearer_transport,
    get_strategy=get_jwt_strategy,
)

fastapi_users = FastAPIUsers[User, uuid.UUID](get_user_manager, [auth_backend])

current_active_user = fastapi_users.current_user(active=True)


# app.py


@asynccontextmanager
async def lifespan(app: FastAPI):
    # Not needed if you setup a migration system like Alembic
    await create_db_and_tables()
    yield


app = FastAPI(lifespan=lifespan)

app.include_router(
    fastapi_users.get_auth_router(auth_backend), prefix="/auth/jwt", tags=["auth"]
)
app.include_router(
    fastapi_users.get_register_router(UserRead, UserCreate),
    prefix="/auth",
    tags=["auth"],
)
app.include_router(
    fastapi_users.get_users_router(UserRead, UserUpdate),
    prefix="/users",
    tags=["users"],
)


if __name__ == "__main__":
    asyncio.run(create_db_and_tables())
