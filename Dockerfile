FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MEMSITE_VAR_DIR=/app/var
WORKDIR /app

COPY pyproject.toml ./
COPY memsite memsite
COPY memory memory
COPY agents agents
RUN pip install --no-cache-dir .

COPY . .
RUN DJANGO_DEBUG=false DJANGO_SECRET_KEY=collectstatic python manage.py collectstatic --noinput \
    && useradd --create-home memsite && chown -R memsite /app/var
USER memsite

EXPOSE 8000
CMD ["gunicorn", "memsite.wsgi:application", "--bind", "0.0.0.0:8000"]
