"""Markdown folders and the brain: import a folder, export the brain, keep a folder in live sync.

Every page, link, alias, timeline entry and fact is written through the same
`Dispatcher` the CLI and MCP use; this package only decides *what* to write
(docs/sync.md). Per-file state lives in the brain (`sync_folders`, `sync_files`,
`sync_conflicts`), so a restart resumes where the last pass stopped.
"""
