"""Django's own settings, DRF's and the apps: INSTALLED_APPS and MIDDLEWARE are listed here only."""

from pathlib import Path

from memsite.settings.env import env_bool, env_int, env_list, env_str
from memsite.settings.security import content_security_policy, production_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("MEMSITE_VAR_DIR", str(BASE_DIR / "var")))

# Off unless asked for (`make run` asks): a deployment that forgets it gets production's
# defaults, not tracebacks and debug pages.
DEBUG = env_bool("DJANGO_DEBUG", False)
# The embedded default runs on a developer's machine; production must bring a strong key of its own.
SECRET_KEY = (
    env_str("DJANGO_SECRET_KEY", "memsite-embedded-insecure-key")
    if DEBUG
    else production_secret_key(env_str("DJANGO_SECRET_KEY"))
)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# HTTPS, with DEBUG off. memsite is served behind a proxy that terminates TLS (deploy/nginx/ in
# docker-compose) and says so in X-Forwarded-Proto, which the proxy sets itself whatever the
# client sent. Cookies travel over HTTPS only; browsers are told to come back over HTTPS only
# (HSTS); plain HTTP is redirected, but for /healthz, which load balancers probe over HTTP.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = not DEBUG
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if not DEBUG and env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", True) else None
)
SECURE_SSL_REDIRECT = not DEBUG and env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = 0 if DEBUG else env_int("DJANGO_SECURE_HSTS_SECONDS", 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
# Preloading puts the domain in browsers' built-in lists, which takes months to undo: the
# deployment opts in (DJANGO_SECURE_HSTS_PRELOAD=true); until then check --deploy's reminder
# (security.W021) is silenced.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Sent with DEBUG off (memsite/csp.py). Scripts come only from memsite's static files (htmx,
# Swagger UI): no inline script, no eval. Inline styles stay allowed: the context bars size
# their segments with style attributes, and htmx adds its indicator styles.
MEMSITE_CONTENT_SECURITY_POLICY = content_security_policy(
    {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],  # Swagger UI draws its icons from data: URLs
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
)

INSTALLED_APPS = [
    "memsite.apps.AdminConfig",  # django.contrib.admin, its login limited (memsite/login.py)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    # Only for memsite.spaces' migration 0002, which turns its tokens into ApiTokens and deletes
    # them; nothing else uses it (its admin is unregistered).
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # the API docs page's Swagger UI, served from static files
    "django_htmx",
    "template_partials",
    "treebeard",
    "memsite",
    "memsite.llm",
    "memsite.spaces",
    "memory",
    "agents",  # the three apps below and the migrations their tables were made by
    "agents.context",
    "agents.brains",
    "agents.graphs",
    "tools",  # the tools swarm nodes call: served over the API, imported by nothing else
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "memsite.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "memsite.middleware.DatabaseUnavailableMiddleware",  # a lost database: 503, not a traceback
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "memsite.limits.RequestBodyLimitMiddleware",  # 413 from Content-Length, before the CSRF check reads a form
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "memsite.concurrency.CallerConcurrencyMiddleware",  # a caller's requests at once: 429 past them
    "memsite.spaces.middleware.SpaceRoleMiddleware",  # roles on the pages; notes a token's use
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "memsite.urls"
WSGI_APPLICATION = "memsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memsite.llm.context_processors.llm_status",
                "memsite.spaces.context_processors.space_nav",
                "dashboard.context_processors.nav_counts",
            ],
        },
    },
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memsite.spaces.api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "memsite.spaces.api.permissions.SpaceRolePermission",  # the role the method (or the view) needs
    ],
    "DEFAULT_SCHEMA_CLASS": "memsite.schema.AutoSchema",
    "EXCEPTION_HANDLER": "memsite.api.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "memsite.throttles.UserRequestThrottle",
        "memsite.concurrency.CallerConcurrencyThrottle",
    ],
    # The client's address, for the limits on anonymous requests and failed logins: the
    # connection's own, or the one the last of MEMSITE_TRUSTED_PROXIES put in X-Forwarded-For.
    "NUM_PROXIES": env_int("MEMSITE_TRUSTED_PROXIES", 0),
    "DEFAULT_PARSER_CLASSES": [
        "memsite.api.JSONParser",
        "memsite.api.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "memsite API",
    "DESCRIPTION": "Memory for LLM agent swarms: the memory tree, its content and archives.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Two sets of choices are each called `role`: a message's keeps its name, a member's has its own.
    "ENUM_NAME_OVERRIDES": {
        "RoleEnum": "agents.context.models.Role",
        "SpaceRoleEnum": "memsite.spaces.models.ROLE_CHOICES",
    },
    # Swagger UI from drf-spectacular-sidecar's static files, not a CDN: the docs page works
    # offline and its CSP needs no other host.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("MEMSITE_LOG_LEVEL", "INFO")},
    # Django's own console handler would print each of its records a second time, beside the
    # root's ("Watching for file changes with StatReloader", twice).
    "loggers": {"django": {"handlers": [], "level": "INFO", "propagate": True}},
}
