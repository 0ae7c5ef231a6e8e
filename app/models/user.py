from __future__ import annotations

from datetime import datetime

from sqlalchemy import DDL, Boolean, Index, String, event, false
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime, new_id


class User(Model):
    __tablename__ = "users"
    # `flask purge` finds the accounts due for erasure by it (app/domain/lifecycle/leaving.py).
    __table_args__ = (Index("ix_users_erasure_due", "erased_at", "deletion_scheduled_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    # The address in its canonical form (app/domain/addresses.py), shown exactly as stored.
    email: Mapped[str] = mapped_column(String(254))
    # The same canonical form, unique: one account per address. Rows that the canonicalising
    # migration found colliding keep their earlier key until an operator settles them.
    # Compared byte by byte on PostgreSQL too ("C"), whatever the database's collation: its unique
    # index then serves a prefix search (a range of keys), as SQLite's does.
    email_key: Mapped[str] = mapped_column(
        String(254).with_variant(String(254, collation="C"), "postgresql"), unique=True)
    full_name: Mapped[str] = mapped_column(String(200), default="")
    # None for accounts that only sign in through a provider.
    password_hash: Mapped[str | None] = mapped_column(String(255))
    plan: Mapped[str] = mapped_column(String(32), default="free")
    email_verified: Mapped[bool] = mapped_column(default=False)
    # When the address was last proved (a confirmation or reset link, or a provider that verified
    # it). None for accounts verified before this was recorded.
    email_verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    password_changed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # When the password in force was shown to be the address holder's: set by a reset link, or by
    # a confirmation link opened in a browser signed in to the account; kept by a password change
    # (made by whoever knew the old one), cleared by a reset link to an old address. None (as at
    # sign-up): whoever set it may be someone else than the address's holder
    # (password_is_the_holders, below).
    password_proved_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Disabled by an operator (the admin API, the console, the CLI), not only by its owner's
    # leaving: then the owner's restore link cancels the deletion but does not enable it.
    disabled_by_operator: Mapped[bool] = mapped_column(Boolean, default=False,
                                                       server_default=false())
    # When its owner asked to leave: it signs in no more, and `flask purge` erases it once
    # SVC_ACCOUNT_DELETION_GRACE_DAYS have passed, unless the mailed link undoes it before.
    deletion_scheduled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # When `flask purge` erased it (once): deletion_scheduled_at stays, so nothing re-enables it.
    erased_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # May use the support console (/admin): granted only from the CLI.
    # The language the account chose on a page (app/web/locale.py): its pages' and its mails'.
    # None: its browser's.
    language: Mapped[str | None] = mapped_column(String(16))
    operator: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    @property
    def password_is_the_holders(self) -> bool:
        """Whether only the holder of the address can know the password (or there is none)."""
        return self.password_hash is None or (self.email_verified
                                              and self.password_proved_at is not None)


# The lists and searches of accounts (app/domain/admin/directory.py) read a page in the order of
# (created_at, id), so each walks an index in that order and stops at the page's end, whatever the
# number of accounts: all of them, one plan, or the disabled ones. The mails find their account's
# language by the address (app/domain/accounts/emails.py).
Index("ix_users_created_at_id", User.created_at, User.id)
Index("ix_users_plan_created_at_id", User.plan, User.created_at, User.id)
Index("ix_users_disabled_created_at_id", User.created_at, User.id,
      sqlite_where=User.disabled_at.is_not(None), postgresql_where=User.disabled_at.is_not(None))
Index("ix_users_email", User.email)
# The support desk's search (a part of the address, the name or the id, any case: ILIKE):
# trigrams (pg_trgm) on PostgreSQL only; SQLite reads the table (docs/operators/scale.md).
Index("ix_users_search_trgm", User.email, User.full_name, User.id, postgresql_using="gin",
      postgresql_ops={"email": "gin_trgm_ops", "full_name": "gin_trgm_ops",
                      "id": "gin_trgm_ops"}).ddl_if(dialect="postgresql")
# The trigram operators that index needs, for a schema made from the models (the tests);
# migration 0090 creates the extension on a deployed database.
event.listen(User.metadata, "before_create",
             DDL("CREATE EXTENSION IF NOT EXISTS pg_trgm").execute_if(dialect="postgresql"))
