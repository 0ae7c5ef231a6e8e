"""Mapped classes only. Import them from here."""

from app.models.account_event import AccountEvent, AccountEventSequence
from app.models.audit import AuditEvent
from app.models.consent import ConsentGrant
from app.models.delivery import Delivery
from app.models.email_code import EmailCode
from app.models.failure_counter import FailureCounter
from app.models.handoff import HandoffCode
from app.models.idempotent_answer import IdempotentAnswer
from app.models.identity import Identity
from app.models.mail_job import MailJob
from app.models.one_time_token import OneTimeToken
from app.models.passkey import Passkey, PasskeyChallenge
from app.models.pushed_request import PushedRequest
from app.models.rate_limit_counter import RateLimitCounter
from app.models.second_factor import PendingSignIn, RecoveryCode, TotpFactor
from app.models.service_client import ServiceClient
from app.models.session import AuthSession, RefreshToken
from app.models.site import ClientSite, SiteRegistryMark
from app.models.user import User

__all__ = ["AccountEvent", "AccountEventSequence", "AuditEvent", "AuthSession", "ClientSite",
           "ConsentGrant", "Delivery", "FailureCounter", "HandoffCode", "IdempotentAnswer",
           "Identity", "MailJob", "OneTimeToken", "Passkey", "PasskeyChallenge", "PendingSignIn",
           "PushedRequest", "RateLimitCounter", "RecoveryCode", "RefreshToken", "ServiceClient",
           "SiteRegistryMark", "TotpFactor", "User",
           "EmailCode"]
