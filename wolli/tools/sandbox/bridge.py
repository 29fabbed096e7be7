"""Runs inside the sandbox: the proxy's door into a network namespace that has no network.

``python bridge.py SOCKET PORT -- COMMAND...``: listens on 127.0.0.1:PORT (the only
network the namespace has), hands every connection to the Unix socket SOCKET (Wolli's
proxy outside, bind-mounted in), runs COMMAND with ``HTTP(S)_PROXY`` pointing at PORT,
passes signals on and exits with its status. Standard library only: it must start fast and
must not import Wolli (or anything of the project) inside the sandbox.
"""

import os
import signal
import socket
import subprocess
import sys
import threading


def _pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


def _serve(server, path):
    while True:
        try:
            client, _ = server.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        print("usage: bridge.py SOCKET PORT -- COMMAND...", file=sys.stderr)
        return 2
    path, port, command = argv[0], int(argv[1]), argv[3:]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(128)
    threading.Thread(target=_serve, args=(server, path), daemon=True).start()
    proxy = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        env[name] = proxy
    env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    child = subprocess.Popen(command, env=env)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda signum, frame: child.send_signal(signum))
    code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
