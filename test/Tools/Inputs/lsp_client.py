#!/usr/bin/env python3
"""A minimal LSP client for attn-lsp-lsp.test: speaks JSON-RPC over the
server's stdio (Content-Length framing), opens a spec, and prints what an
editor would show.

usage: lsp_client.py SERVER SPEC LINE CHARACTER

Prints one `diagnostic <line>:<col> <severity> <message>` per diagnostic of
the opened spec (1-based, as editors show them), then `hover: <first line>`
for the hover at LINE:CHARACTER (0-based, as LSP counts) and
`definition: <line>` for go-to-definition there. Every wait has a timeout,
so a silent server fails the test instead of hanging it.
"""
import json
import pathlib
import subprocess
import sys
import threading
import queue

TIMEOUT_SECONDS = 60


def main():
    server, spec, line, character = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    uri = pathlib.Path(spec).resolve().as_uri()
    proc = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    messages = queue.Queue()

    def read():
        while True:
            length = None
            while True:
                header = proc.stdout.readline()
                if not header:
                    return
                header = header.decode().strip()
                if not header:
                    break
                if header.lower().startswith("content-length:"):
                    length = int(header.split(":")[1])
            messages.put(json.loads(proc.stdout.read(length)))

    threading.Thread(target=read, daemon=True).start()

    def send(message):
        body = json.dumps(message).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def wait_for(predicate):
        while True:
            message = messages.get(timeout=TIMEOUT_SECONDS)
            if predicate(message):
                return message

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    wait_for(lambda m: m.get("id") == 1)
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
          "params": {"textDocument": {"uri": uri, "languageId": "mlir",
                                      "version": 1,
                                      "text": open(spec).read()}}})
    published = wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    for diagnostic in published["params"]["diagnostics"]:
        start = diagnostic["range"]["start"]
        print(f"diagnostic {start['line'] + 1}:{start['character'] + 1} "
              f"severity {diagnostic.get('severity')} {diagnostic['message']}")
    position = {"textDocument": {"uri": uri},
                "position": {"line": line, "character": character}}
    send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": position})
    hover = wait_for(lambda m: m.get("id") == 2).get("result") or {}
    contents = hover.get("contents", {})
    text = contents.get("value", "") if isinstance(contents, dict) else str(contents)
    print("hover: " + next((l for l in text.splitlines() if l.strip()), ""))
    send({"jsonrpc": "2.0", "id": 3, "method": "textDocument/definition", "params": position})
    definitions = wait_for(lambda m: m.get("id") == 3).get("result") or []
    for location in definitions if isinstance(definitions, list) else [definitions]:
        print(f"definition: {location['range']['start']['line'] + 1}")
    send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
    wait_for(lambda m: m.get("id") == 4)
    send({"jsonrpc": "2.0", "method": "exit"})
    proc.wait(timeout=TIMEOUT_SECONDS)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
