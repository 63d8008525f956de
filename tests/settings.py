"""Settings of the test run: memsite's own as `make run` has them (DJANGO_DEBUG=true), so the
test client and the browser tests' plain-HTTP live server are not redirected to HTTPS and keep
their cookies. pytest-django then turns DEBUG itself off in every test, so pages render as in
production, Content-Security-Policy included. Set in the environment, so that the servers and
workers tests start see it too."""

import os

os.environ["DJANGO_DEBUG"] = "true"

from memsite.settings import *  # noqa: E402, F403 (the project's settings, under the environment above)
