# One image for every Dealer service: web, worker and the one-shot migration.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN useradd --create-home --uid 1000 dealer
WORKDIR /app
COPY pyproject.toml README.md ./
COPY worker ./worker
COPY webui ./webui
RUN pip install ".[monitoring]"
USER dealer
ENV DEALER_DATA_DIR=/data
EXPOSE 8000
CMD ["dealer", "web", "--host", "0.0.0.0", "--port", "8000"]
