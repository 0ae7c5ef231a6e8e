"""The bound that password hashing sets on login: a Flask endpoint that only verifies one argon2id
hash, served with the same gunicorn settings as the service.

POST / with a JSON body {"email": ..., "password": ...} (the same shape as a login) verifies the
password against one hash made at start-up with argon2-cffi's PasswordHasher and the parameters
bench/run.py passes (the service's production defaults): BENCH_ARGON2_MEMORY_COST (KiB),
BENCH_ARGON2_TIME_COST, BENCH_ARGON2_PARALLELISM, BENCH_ARGON2_PASSWORD. 200 when it matches.
"""

import os

from argon2 import PasswordHasher
from argon2.exceptions import VerificationError
from flask import Flask, Response, jsonify, request

hasher = PasswordHasher(
    memory_cost=int(os.environ["BENCH_ARGON2_MEMORY_COST"]),
    time_cost=int(os.environ["BENCH_ARGON2_TIME_COST"]),
    parallelism=int(os.environ["BENCH_ARGON2_PARALLELISM"]),
)
password_hash = hasher.hash(os.environ["BENCH_ARGON2_PASSWORD"])

app = Flask(__name__)


@app.post("/")
def verify() -> tuple[Response, int]:
    body = request.get_json()
    try:
        hasher.verify(password_hash, body["password"])
    except VerificationError:
        return jsonify({"ok": False}), 401
    return jsonify({"ok": True}), 200
