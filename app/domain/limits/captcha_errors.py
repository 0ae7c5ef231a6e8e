"""The captcha's refusals (limits/captcha.py): each with its stable code, as every AuthError."""

from __future__ import annotations

from typing import Any

from app.domain.errors import AuthError, InvalidBody
from app.domain.text import N_


class CaptchaProblem(InvalidBody):
    """422 with a pointer to the token, and what a client needs to render the widget."""

    def __init__(self, challenge: dict[str, str]) -> None:
        super().__init__(self.detail, [{"pointer": "#/captcha_token", "detail": self.detail}])
        self.challenge = challenge

    def members(self) -> dict[str, Any]:
        return {**super().members(), "captcha": self.challenge}  # the widget to render


class CaptchaRequired(CaptchaProblem):
    code = "captcha_required"
    detail = N_("Solve the captcha, then send its token as captcha_token.")


class CaptchaInvalid(CaptchaProblem):
    code = "captcha_invalid"
    detail = N_("The captcha was not solved, has expired or was already used. Solve it again.")


class CaptchaUnavailable(AuthError):
    """The provider does not answer: answered 503 with Retry-After."""

    status = 503
    code = "captcha_unavailable"
    detail = N_("The captcha check is unavailable. Try again shortly.")
    retry_after = 30
