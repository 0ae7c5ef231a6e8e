"""app/domain/audit.py's AuditName: one enum names every event the domain writes; the values the
table, the log and the exports hold are the ones they always were."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.domain import audit
from app.domain.audit import AuditName, ClientInfo, ViewFamily, of_view
from app.extensions import db
from app.models import AuditEvent

# The names written before the enum, as operators' queries and exports know them.
WRITTEN = {
    "account_created", "account_disabled", "account_enabled", "account_erased",
    "account_exported", "captcha_unavailable", "client_token_issued", "consent_given",
    "deletion_cancelled", "deletion_scheduled", "email_change_requested", "email_confirmed",
    "email_changed", "email_change_undone", "handoff_code_refused", "handoff_code_replayed",
    "login_failed", "login_succeeded", "logout_local", "logout_others", "logout_global",
    "operator_granted", "operator_revoked", "passkey_added", "passkey_removed",
    "password_changed", "password_reset", "password_reset_sent_by_operator", "plan_changed",
    "profile_changed", "provider_link_needs_proof", "provider_took_over",
    "provider_linked_google", "provider_linked_github", "provider_unlinked_google",
    "provider_unlinked_github", "recovery_codes_regenerated", "refresh_token_reused",
    "second_factor_added", "second_factor_failed", "second_factor_removed",
    "second_factor_verified", "second_factors_reset", "sessions_ended", "signed_up",
    "signing_key_revoked", "token_refreshed", "token_revoked", "reset_password_sent",
    "confirm_email_sent", "change_email_sent", "undo_email_change_sent", "undo_deletion_sent",
}
# Added since, with the ways in without a password (the email code, a first password, the
# password a code's sign-in removes).
ADDED = {"email_code_sent", "email_code_failed", "password_set", "unproved_password_removed"}


def test_the_enum_holds_the_names_written_before_and_those_added_since():
    assert {name.value for name in AuditName} == WRITTEN | ADDED


def test_the_families_name_a_member_or_refuse():
    assert AuditName.logout("others") is AuditName.LOGOUT_OTHERS
    assert AuditName.provider_linked("github") is AuditName.PROVIDER_LINKED_GITHUB
    assert AuditName.link_sent("undo_deletion") is AuditName.UNDO_DELETION_SENT
    with pytest.raises(ValueError):
        AuditName.provider_unlinked("myspace")
    assert of_view(ViewFamily.CONSOLE, "account") == "console:account"


def test_the_table_holds_the_plain_value(app, user):
    with app.app_context():
        audit.record_alone(AuditName.SIGNED_UP, ClientInfo(), user_id=user.id)
        audit.record_reads(of_view(ViewFamily.ADMIN_API, "get_user"), ClientInfo(), [user.id])
        db.session.expire_all()
        written = set(db.session.scalars(select(AuditEvent.event).where(
            AuditEvent.user_id == user.id)))
        assert written == {"signed_up", "admin_api:get_user"}
        assert all(type(event) is str for event in written)
