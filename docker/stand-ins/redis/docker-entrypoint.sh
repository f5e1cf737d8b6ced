#!/bin/sh
# As the official redis image's entrypoint: options alone run redis-server, which runs as the
# redis user with /data its own. Debian's build refuses clients from other hosts (other
# containers) in protected mode, which the official image turns off.
set -eu
if [ "${1#-}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$1" = redis-server ]; then
  shift
  set -- redis-server --protected-mode no "$@"
  if [ "$(id -u)" = 0 ]; then
    chown -R redis:redis /data
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
