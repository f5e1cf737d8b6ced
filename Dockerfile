# One image for every Dealer service: web, worker, the one-shot migration and Flower.
#
# PYTHON_IMAGE is the base of both stages: the official python:3.11-slim by default; where no
# image registry answers, docker/test-compose passes a stand-in built from Debian's packages.
ARG PYTHON_IMAGE=python:3.11-slim

# The build stage compiles the native core (Cython and gcc, setup.py) into a wheel; the image
# itself gets the wheel and no compiler.
FROM ${PYTHON_IMAGE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The build's own requirements (pyproject.toml's [build-system]) in a layer of their own, so that a
# change of code does not fetch them again.
COPY pyproject.toml ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires'], sep='\n')" \
    > /tmp/build-requirements.txt && pip install --no-cache-dir -r /tmp/build-requirements.txt
COPY setup.py README.md ./
COPY worker ./worker
COPY webui ./webui
RUN pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
# /data (DEALER_DATA_DIR: the web's session secret when DEALER_SECRET_KEY is not set) belongs to
# the user the services run as; a new volume mounted there starts with its owner.
RUN useradd --create-home --uid 1000 dealer && install -d -o dealer -g dealer -m 0700 /data
WORKDIR /app
# The dependencies first, read from pyproject.toml alone: a change of code rebuilds only the layer
# that installs the wheel.
COPY pyproject.toml /tmp/pyproject.toml
RUN python -c "import tomllib; p = tomllib.load(open('/tmp/pyproject.toml', 'rb'))['project']; \
print(*p['dependencies'], *p['optional-dependencies']['monitoring'], sep='\n')" > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt && rm /tmp/pyproject.toml /tmp/requirements.txt
COPY --from=build /wheels /wheels
RUN pip install "$(ls /wheels/dealer-*.whl)[monitoring]" && rm -rf /wheels \
 && python -c "from worker import engines; assert {e.core_name for e in engines.all_engines()} == {'native'}" \
 && dealer games --cores
LABEL org.opencontainers.image.title=dealer
USER dealer
ENV DEALER_DATA_DIR=/data
EXPOSE 8000
CMD ["dealer", "web", "--host", "0.0.0.0", "--port", "8000"]
