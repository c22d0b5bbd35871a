"""One fake GitHub for every test, shaped by GitHub's own API description.

Design
------
`FakeGitHub` is a plain object holding state (installations, repositories with real git object ids, pull
requests, check runs, reviews, threads, comments, reactions) plus an aiohttp application (`fake.app`) that
answers GitHub's REST routes and `POST /graphql`.  The same object serves both ways of running it:

* in the test's event loop: the `fake_github` fixture (tests/conftest.py) serves `fake.app` with
  pytest-aiohttp's `aiohttp_server` on 127.0.0.1 and a free port; `fake.base_url` is the API root
  (use it as GITHUB_API_URL; GraphQL is `fake.base_url + "/graphql"`).  Tests seed and inspect the object
  directly.
* in its own process: `python -m tests.fakegithub --port 0 --app-id N --public-key pub.pem --state-file seed.json`
  prints one JSON line `{"url": ..., "seeded": ...}` and serves until SIGTERM.  `FakeGitHubProcess`
  (process.py) starts it and drives it through `/_fake/...` control endpoints (log, state, seed, faults,
  rate-limit, revoke-tokens, push, payload).  Seeds are JSON (control.apply_seed).

Every request is matched against tests/data/github/openapi.json (spec.py): unknown routes, bad path/query
parameters, bodies that fail the operation's schema, unknown body fields, missing auth, expired tokens, tokens used
outside their installation's repositories or permissions, GraphQL that does not validate against GitHub's schema,
and what the description cannot say (a completed check run without conclusion, a review comment outside the
diff) are recorded in `fake.violations` and answered like GitHub (404/422/401/403).  A test that drives the App
ends with `assert fake.violations == []`.  `fake.requests` logs every call (secrets redacted);
`fake.calls("checks/create")` filters by operation id or "METHOD /template".  Faults are queued per route with
`fake.inject(route, Fault...)`.  Webhooks: `fake.pull_request_payload(pull)` etc. build payloads from GitHub's
examples and the fake's state; `fake.delivery(event, payload, secret)` signs them.
The App manifest flow (apps.py): the web pages a browser posts the manifest to, the conversion that makes the
fake become the new App, its installation page.
"""

from .auth import KeyPair, generate_key_pair, make_app_jwt
from .faults import Fault
from .process import FakeGitHubProcess
from .server import FakeGitHub, LoggedRequest, Violation
from .state import CheckRun, IssueComment, Pull, PullFile, Repo, ReviewComment, Thread
from .webhooks import Delivery, adjust, load_example, sign

__all__ = [
    "CheckRun",
    "Delivery",
    "FakeGitHub",
    "FakeGitHubProcess",
    "Fault",
    "IssueComment",
    "KeyPair",
    "LoggedRequest",
    "Pull",
    "PullFile",
    "Repo",
    "ReviewComment",
    "Thread",
    "Violation",
    "adjust",
    "generate_key_pair",
    "load_example",
    "make_app_jwt",
    "sign",
]
