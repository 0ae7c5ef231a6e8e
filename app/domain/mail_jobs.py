"""What a mail job of each kind sends, rendered when the job runs from its payload."""

from __future__ import annotations

from app.domain.accounts import email_sign_in, emails, passkey_signup, recovery
from app.domain.lifecycle import address_change, leaving
from app.infra.lanes import Handler, Job
from app.infra.mail import Message
from app.models import MailJob


def _password_changed(job: Job) -> Message:
    return emails.password_changed(job.payload["to"], job.payload.get("unlinked") or [])


def _provider_linked(job: Job) -> Message:
    return emails.provider_linked(job.payload["to"], job.payload["provider"],
                                  took_over=bool(job.payload.get("took_over")))


def _provider_unlinked(job: Job) -> Message:
    return emails.provider_unlinked(job.payload["to"], job.payload["provider"])


def _second_factor(added: bool) -> Handler:
    return lambda job: emails.second_factor_changed(job.payload["to"], job.payload["factor"],
                                                    added=added, name=job.payload.get("name"))


HANDLERS: dict[str, Handler] = {
    MailJob.RESET_PASSWORD: recovery.reset_link_mail,
    MailJob.CONFIRM_EMAIL: recovery.confirmation_mail,
    MailJob.INVITATION: recovery.invitation_mail,
    MailJob.EMAIL_CHANGE: address_change.change_link_mail,
    MailJob.EMAIL_CHANGE_REFUSED: address_change.refused_mail,
    MailJob.EMAIL_CHANGED: address_change.changed_mail,
    MailJob.DELETION_SCHEDULED: leaving.restore_link_mail,
    MailJob.NEW_DEVICE: lambda job: emails.new_device(job.payload["to"],
                                                      job.payload.get("user_agent"),
                                                      job.payload["at"]),
    MailJob.RECOVERY_CODE_USED: lambda job: emails.recovery_code_used(job.payload["to"],
                                                                      job.payload["left"]),
    MailJob.PASSWORD_CHANGED: _password_changed,
    MailJob.PASSWORD_REMOVED: lambda job: emails.password_removed(job.payload["to"]),
    MailJob.PROVIDER_LINKED: _provider_linked,
    MailJob.PROVIDER_UNLINKED: _provider_unlinked,
    MailJob.SECOND_FACTOR_ADDED: _second_factor(added=True),
    MailJob.SECOND_FACTOR_REMOVED: _second_factor(added=False),
    MailJob.SIGNUP_CODE: passkey_signup.code_mail,
    MailJob.EMAIL_CODE: email_sign_in.code_mail,
}
