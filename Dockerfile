# `lawindex serve` from this repository: docker-compose.yml's `lawindex` service.
#
#   docker build -t lawindex .                                              # where a registry answers
#   docker build --build-arg BASE_IMAGE=$(lawindex opensearch image --base) -t lawindex .   # with none
#
# Any Debian bookworm will do: Debian's python3 (3.11), a virtual environment, lawindex and its
# dependencies from PyPI. No compiler: every dependency has a wheel for CPython 3.11 on x86_64 and arm64.
# A `wheels/` folder in the build context (lawindex's own wheel among them), when there is one, is
# installed from instead, with no index:
# tests/docker/test_compose.py makes one with this machine's pip, for machines whose containers cannot
# reach PyPI themselves (a proxy whose certificate only the machine trusts).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
COPY . /src/
# One layer: with the vfs storage driver (CI's dockerd) every layer is a whole copy of the file system.
RUN apt-get update -q \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/lawindex \
    && /opt/lawindex/bin/pip install --no-cache-dir --disable-pip-version-check -q \
        $(if [ -d /src/wheels ]; then echo --no-index --find-links /src/wheels lawindex; else echo /src; fi) \
    && rm -rf /src \
    && useradd --uid 1000 --no-create-home --shell /usr/sbin/nologin lawindex
ENV PATH=/opt/lawindex/bin:$PATH LANG=C.UTF-8
# Not root: the service needs no privilege (port 8077 is not a privileged one).
USER lawindex
EXPOSE 8077
CMD ["lawindex", "serve", "--host", "0.0.0.0", "--port", "8077"]
