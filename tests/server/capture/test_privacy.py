"""privacy.clean: no `<private>` span and no secret of any class survives; ordinary text does."""

from __future__ import annotations

import pytest

from memverbs.server.capture.privacy import clean, is_clean

SECRETS = [
    ("AKIAJ5QXZ7NPL2W4EXRT", "AKIAJ5QXZ7NPL2W4EXRT"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"),
    ("AIzaSyD3xT9kQ2mN7pL4vR8wB1cF6hJ0sE5gU2y", "AIzaSyD3xT9kQ2mN7pL4vR8wB1cF6hJ0sE5gU2y"),
    ("AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIz", "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIz"),
    ("ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "github_pat_11ABCDEFG"),
    ("glpat-Xy9Zb8Wc7Vd6Ue5Tf4Sg", "glpat-Xy9Zb8Wc7Vd6Ue5Tf4Sg"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012"),
    ("sk_live_51HqLyjWDarjtT1zdp7dcXYZ", "sk_live_51HqLyjWDarjtT1zdp7dcXYZ"),
    ("sk-proj-Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw", "sk-proj-Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw"),
    ("sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa", "sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa"),
    ("npm_Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw3Xy5", "npm_Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw3Xy5"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA7bq"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhk (cut off)", "MIIEvQIBADANBgkqhk"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV", "eyJzdWIiOiIxMjM0In0"),
    ("postgresql://deploy:Wh1sky-T4ngo@db.internal:5432/app", "Wh1sky-T4ngo"),
    ("https://admin:Sup3rS3cretPw@api.internal/v2", "Sup3rS3cretPw"),
    ("DB_PASSWORD=plaintext-rosebud-42", "plaintext-rosebud-42"),
    ('SECRET_KEY="django-insecure-8x!k#v@q2m$w"', "django-insecure"),
    ("export STRIPE_API_KEY=whatever-value-here", "whatever-value-here"),
    ("client_secret: 0a1b2c3d4e5f", "0a1b2c3d4e5f"),
    ("Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("the telegram bot 1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"),
]


@pytest.mark.parametrize(("text", "needle"), SECRETS)
def test_every_class_of_secret_is_redacted(text, needle):
    out = clean(f"Remember that prod uses {text} for deploys.")
    assert needle not in out and "[redacted:" in out, out
    assert not is_clean(out)  # a redacted sentence is never a fact


@pytest.mark.parametrize("text", [
    "Remember <private>the alarm code is 7391</private>that we ship on Tuesdays.",
    "Ship on Tuesdays. <PRIVATE>alarm\ncode 7391</Private>",
    "Ship on Tuesdays. <private>alarm code 7391 and everything after, never closed",
])
def test_private_spans_are_dropped_closed_or_not(text):
    out = clean(text)
    assert "7391" not in out and "alarm" not in out and "Tuesdays" in out


@pytest.mark.parametrize("text", [
    "We decided to use Postgres for the job queue.",
    "commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c on main",
    "python -m pytest -q tests/test_calc.py",
    "the password policy needs review",
    "see https://github.com/acme/widget/pull/12",
])
def test_ordinary_text_is_left_alone(text):
    assert clean(text) == text and is_clean(text)


@pytest.mark.parametrize(("text", "needle"), [
    ("Remember that the staging password is hunter2staging.", "hunter2staging"),
    ("The wifi passphrase is correct horse battery staple.", "correct horse battery staple"),
    ("the safe combination is 12-34-56, don't tell", "12-34-56"),
    ("The door code is 4411.", "4411"),
    ("My PIN is 5531.", "5531"),
    ("The API token for prod is 4f9c2a7b1e8d3f6a0b5c9e2d7f1a4b8c", "4f9c2a7b1e8d3f6a0b5c9e2d7f1a4b8c"),
    ("the vault token is now hvs.CAESIJlU9Jq3kS0dG9rZW4xYWJjZGVm", "CAESIJlU9Jq3kS0dG9rZW4xYWJjZGVm"),
    ("log in with password Quartz-Lantern-9", "Quartz-Lantern-9"),
    ("DB_PASS=s3cr3t-value and SMTP_PASS=mailpass99", "mailpass99"),
    ("redis://:supersecretpw@cache.internal:6379/0", "supersecretpw"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("sshpass -p 'Tr0ub4dor' ssh deploy@host", "Tr0ub4dor"),
    ("mysql -u root -pRootPw123 app", "RootPw123"),
    ("curl -u admin:AdminPw99 https://api.internal", "AdminPw99"),
    ("PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1\nAAABAQCkR8oxyz\nPrivate-MAC: 8f3e", "AAABAQCkR8oxyz"),
    ("LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KYjNCbGJu", "YjNCbGJu"),
    ("-----BEGIN RSA PRIVATE\nKEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE\nKEY-----", "MIIEowIBAAKCAQEA7bq"),
    ("MIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----\nthanks", "MIIEowIBAAKCAQEA7bq"),  # the second half of a split key
])
def test_credentials_in_words_flags_headers_and_keys_are_redacted(text, needle):
    out = clean(text)
    assert needle not in out and "[redacted:" in out, out


@pytest.mark.parametrize("text", [
    "the password is stored in the keyring",
    "the token is expired, rotate it",
    "the code is ready for review",
    "max_tokens=1000 and pass_rate: 0.95",
    "docker run -p 8080:80 nginx",
    "PWD=/home/me/app",
    "HTTPServerRequestHandlerFactory2 lives in /usr/lib/python3.11/site-packages/foo",
    "a < b and c > d",
])
def test_descriptions_and_look_alikes_are_not_secrets(text):
    assert clean(text) == text


@pytest.mark.parametrize(("text", "kept"), [
    ("a <private>x</private> b", "a  b"),
    ("a <PRIVATE >x</Private > b", "a  b"),
    ('a <private reason="h">x</private> b', "a  b"),
    ("a <private\n>x</private\n> b", "a  b"),
    ("a <private>x <private>y</private> z</private> b", "a  b"),  # the outermost pair wins
    ("a <private>x", "a "),  # unclosed: the rest of the text
    ("x</private> b", " b"),  # the end of a block opened in an earlier message
    ("a <private/> x", "a "),  # self-closing: opens a block
    ("a &lt;private&gt;x&lt;/private&gt; b", "a  b"),
    ("a < private >x< / private > b", "a  b"),
    ("a <private-notes>x</private-notes> b", "a  b"),
    ("<secret>k</secret> ok", " ok"),
    ("if a < b and c > d", "if a < b and c > d"),
    ("a <privately> b", "a <privately> b"),
])
def test_the_private_rule(text, kept):
    from memverbs.server.capture.private import strip_private

    assert strip_private(text) == kept


def test_a_lone_surrogate_is_stored_as_a_replacement_character():
    assert clean("bad \ud800 text") == "bad \ufffd text"
