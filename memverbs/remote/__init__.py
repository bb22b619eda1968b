"""Using a remote brain from this machine: the domain both the CLI and the installers import.

* `record` — the URL, the token's home (OS keyring or `$MEMVERBS_REMOTE_TOKEN`) and
  `$MEMVERBS_HOME/remote.json`; stdlib only, so the hooks import it too.
* `connection` — the connect and disconnect workflows: rehearse every harness
  registration, store the token, register the remote brain in harnesses (each harness's
  `remote_plan` in its installer module), and undo it all.

The CLI (`memverbs connect`, `disconnect`, `remote-header`) only parses arguments and
renders what these return.
"""
