"""What limits guessing: failure counters, known devices, captcha."""
