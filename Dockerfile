# One image for every Dealer service: web, worker and the one-shot migration.

# The build stage compiles the native core (Cython and gcc, setup.py) into a wheel; the image
# itself gets the wheel and no compiler.
FROM python:3.11-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY worker ./worker
COPY webui ./webui
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN useradd --create-home --uid 1000 dealer
WORKDIR /app
COPY --from=build /wheels /wheels
RUN pip install "$(ls /wheels/dealer-*.whl)[monitoring]" && rm -rf /wheels \
 && python -c "from worker import engines; assert {e.core_name for e in engines.all_engines()} == {'native'}" \
 && dealer games --cores
USER dealer
ENV DEALER_DATA_DIR=/data
EXPOSE 8000
CMD ["dealer", "web", "--host", "0.0.0.0", "--port", "8000"]
