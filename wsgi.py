import sys

from app import create_app
from app.infra.settings import SettingError

try:
    app = create_app()
except SettingError as error:  # one line naming the setting, not a traceback
    sys.exit(f"svc-auth cannot start: {error}")
