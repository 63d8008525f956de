"""gunicorn's settings for memsite, in the Procfile, docker-compose and the Dockerfile alike.

gunicorn serves behind a buffering proxy (deploy/nginx/): the proxy reads each request whole
before passing it on, so a slow client holds a proxy connection, never one of these threads.
Where no such proxy is in front, memsite's own check (BodyReadTimeout, memsite/limits.py)
answers 408 to a body that stalls for MEMSITE_BODY_TIMEOUT_S, but a body that trickles in, or
connections opened faster than they time out, still hold threads."""

import os

bind = [f"0.0.0.0:{os.environ.get('PORT', '8000')}"]
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
# A worker that has not reported for this long is killed and replaced. A gthread worker
# reports from its main loop, so a slow request in one of its threads does not count.
timeout = 60
graceful_timeout = 30
keepalive = 5
# The proxy's address, whose X-Forwarded-Proto gunicorn believes. Compose sets "*": there only
# the proxy can reach gunicorn, and its address is not known in advance.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
# Bounds on the request line and headers, which gunicorn reads before any view runs.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190
accesslog = "-"
# The client's address as the proxy saw it comes first.
access_log_format = '%({x-forwarded-for}i)s %(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(M)sms'
