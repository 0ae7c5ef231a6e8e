from tests.support.http import bearer


def test_signup_login_verify(client):
    signup = client.post("/api/v2/auth/signup", json={
        "email": "grace@example.com", "password": "a long enough passphrase", "full_name": "Grace"})
    assert signup.status_code == 201
    verify = client.get("/api/v2/auth/verify", headers=bearer(signup.get_json()["access_token"]))
    assert verify.get_json()["user"]["email"] == "grace@example.com"
