"""Using a remote brain from this machine: the domain the CLI, the installers and the hooks import.

* `record` — the URL rules and `$MEMVERBS_HOME/remote.json`; stdlib only, so the hooks import it too;
* `vault` — the token's home, the OS keyring; `credentials` — which token a remote brain gets
  (`$MEMVERBS_REMOTE_TOKEN`, then the keyring).

It imports none of the rooms above it: the connect and disconnect workflows, which register the
remote brain in harnesses, are the installers' (installers/connection.py), and the CLI
(`memverbs connect`, `disconnect`, `remote-header`) only parses arguments and renders.
"""
