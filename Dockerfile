FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml setup.py README.md alembic.ini ./
COPY mockkube ./mockkube
COPY openapi ./openapi
COPY migrations ./migrations
RUN pip install --no-cache-dir -e .
EXPOSE 6443
ENTRYPOINT ["mockkube", "serve", "--address", "0.0.0.0", "--port", "6443"]
