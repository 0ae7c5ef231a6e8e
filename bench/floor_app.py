"""The floor: the cheapest Flask endpoint, served with the same gunicorn settings as the service.

Whatever the service costs above this is the service's own work (routing, database, JWT, argon2).
"""

from flask import Flask, Response, jsonify

app = Flask(__name__)


@app.get("/")
def index() -> Response:
    return jsonify({"status": "ok"})
