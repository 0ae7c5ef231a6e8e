"""Driving the hosted pages through the test client: forms sent as a browser sends them."""

import re


def csrf_token(client, path):
    page = client.get(path)
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page.text) or \
        re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, f"no CSRF token on {path}: {page.status_code}"
    return found.group(1)


def submit(client, path, data, token_from=None):
    """POST a form the way a browser would: with the CSRF token of the page it came from."""
    token = csrf_token(client, token_from or path)
    return client.post(path, data={"csrf_token": token, **data})


def open_mailed_link(client, link):
    """Follow a mailed link as a person does: its page (opening it changes nothing), then its
    button. A dead link's page has no button: that page is the answer."""
    path = link[link.index("/", link.index("//") + 2):] if "//" in link else link
    page = client.get(path)
    if page.status_code != 200 or 'name="token"' not in page.text:
        return page
    return submit(client, path, {"token": path.split("token=", 1)[1]})


def sign_in_with_password(client, account, query=""):
    """The login page's password step for `account` (to a second step, or signed in)."""
    return submit(client, "/login" + query, {"email": account.email, "password": account.password})
