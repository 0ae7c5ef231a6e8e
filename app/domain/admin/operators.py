"""Who may use the support console, and the proof asked before an operator changes an account:
an operator has a second factor, and a change needs a sign-in of the last few minutes (or a
fresh code of that factor)."""

from __future__ import annotations

from app.db.transactions import writes
from app.domain import audit
from app.domain.audit import ClientInfo
from app.domain.errors import AuthError
from app.domain.factors import second_factors, step_up
from app.models import AuthSession, User


class OperatorNeedsSecondFactor(AuthError):
    status = 403
    code = "operator_needs_second_factor"
    detail = ("The support console needs a second factor on your account: add an authenticator "
              "app or a passkey on your account page, then come back.")


def is_operator(user: User | None) -> bool:
    return user is not None and user.operator and user.disabled_at is None


def require_second_factor(user: User) -> None:
    if not second_factors.has_second_factor(user):
        raise OperatorNeedsSecondFactor()


def may_change_now(session: AuthSession) -> bool:
    """Whether the operator signed in recently enough to change an account without a code."""
    return step_up.recently_signed_in(session)


@writes
def prove_presence(operator: User, session: AuthSession, code: str | None) -> None:
    """StepUpRequired unless the sign-in is recent or `code` is a fresh one of the operator's
    second factor (then used up)."""
    step_up.step_up(operator, session, code)


def acting(operator: User, client: ClientInfo) -> ClientInfo:
    """The operator as the actor of what they do, in the audit trail."""
    return ClientInfo(client.ip, client.user_agent, actor=f"{audit.OPERATOR}{operator.id}")
