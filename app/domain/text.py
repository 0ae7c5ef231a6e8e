"""The characters we accept in what people type, for the API's schemas and the hosted forms
alike: no NUL or other control character in anything that names or identifies (PostgreSQL
cannot even store a NUL); passwords may hold any character but NUL (no keyboard types one)."""

CONTROL_CHARACTERS = r"\x00-\x1f\x7f"  # a regular-expression character range
PRINTABLE = rf"^[^{CONTROL_CHARACTERS}]*$"
NO_NUL = r"^[^\x00]*$"
