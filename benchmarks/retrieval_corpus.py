"""The labelled corpus of the retrieval-quality benchmark: pages, and queries with the pages they should find.

Queries are of two kinds. `keyword` queries share words with their pages
(titles, aliases, terms); `paraphrase` queries say the same thing in other
words, the case keyword search cannot serve. Paraphrases lean on synonyms a
real embedding model knows — and that the deterministic test embedder's small
synonym table also knows, which is what lets this run offline.
"""

from __future__ import annotations

# (slug, title, body, aliases)
PAGES: list[tuple[str, str, str, list[str]]] = [
    ("notes/deploy-freeze", "Deploy freeze", "We never ship releases on Fridays. Hotfixes need sign-off from the on-call lead.", []),
    ("notes/release-process", "Release process", "Releases are cut from main every Tuesday. The changelog is written before the tag; rollbacks use the previous container image.", []),
    ("notes/incident-2026-03", "March database incident", "Postgres ran out of disk on March 3rd and the API was unavailable for 40 minutes. Root cause: WAL archiving stalled.", []),
    ("notes/incident-review", "Incident review template", "Every outage gets a written review within five days: timeline, impact, root cause, follow-ups.", []),
    ("companies/acme", "Acme Payments", "Acme runs our checkout and invoicing. The agreement renews in September at 1.9% per transaction.", ["Acme"]),
    ("companies/globex", "Globex", "Globex is a prospective client evaluating the analytics product. Their procurement contact is Dana.", []),
    ("people/alice", "Alice Example", "Alice is the engineering manager of the platform team. She prefers written updates to standups.", ["Ali"]),
    ("people/bob", "Bob Builder", "Bob maintains the build pipeline and the CI runners. He is on parental leave until June.", []),
    ("people/dana", "Dana Scully", "Dana handles procurement at Globex and negotiates contracts with suppliers.", []),
    ("notes/hiring-plan", "Hiring plan 2026", "We will recruit two backend engineers and one designer this year. Interviews run on Thursdays.", []),
    ("notes/onboarding", "Onboarding checklist", "New joiners get a laptop, SSO access and a buddy for their first two weeks.", []),
    ("notes/office-move", "Office move", "The team relocates to the new headquarters on Canal Street in October.", []),
    ("notes/remote-policy", "Remote work policy", "Everyone may work from home three days a week. Core hours are 10 to 3.", []),
    ("notes/vacation-policy", "Time off policy", "Staff get 28 days of paid holiday. Requests go through the HR portal two weeks ahead.", []),
    ("notes/salary-bands", "Salary bands", "Compensation is reviewed every April against published bands for each level.", []),
    ("notes/backup-strategy", "Backup strategy", "Nightly snapshots of the database are kept for 30 days and restored monthly as a drill.", []),
    ("notes/sso", "Single sign-on", "Login to every internal tool goes through Okta. Two-factor authentication is mandatory.", []),
    ("notes/secrets", "Secrets handling", "API tokens and passwords live in the vault; never paste them into chat.", []),
    ("notes/perf-budget", "Performance budget", "Pages must render in under 200 ms at p95; the API latency budget is 50 ms.", []),
    ("notes/roadmap-q3", "Q3 roadmap", "The plan for Q3: launch the analytics dashboard, migrate billing to Acme, retire the legacy reports.", []),
    ("notes/okrs", "Team objectives", "Objective one: halve onboarding time. Objective two: reach 99.9% uptime.", []),
    ("notes/cloud-spend", "Cloud spend", "We spend about 40k a month on cloud; the target is to cut that by 15%.", []),
    ("notes/test-strategy", "Test strategy", "Unit tests run on every push; end-to-end checks run nightly against staging.", []),
    ("notes/bug-triage", "Bug triage", "Defects are triaged every Monday; regressions found in production jump the queue.", []),
    ("notes/customer-feedback", "Customer feedback", "Clients ask most often for CSV export and a dark theme.", []),
    ("notes/investor-update", "Investor update", "The seed funding round closed in February; the next one is planned for 2027.", []),
    ("people/carol", "Carol Danvers", "Carol is our counsel; she reviews every vendor agreement before signature.", []),
    ("notes/office-dog", "Office dog", "Biscuit the puppy visits on Wednesdays; ask before feeding him.", []),
    ("notes/team-lunch", "Team lunch", "The team eats together every Thursday; vegetarian options are always ordered.", []),
    ("notes/hardware-policy", "Hardware policy", "Every engineer gets a new workstation every three years.", []),
    ("notes/style-guide", "Writing style guide", "Docs use sentence case headings and active voice; the handbook lives in the wiki.", []),
]

# (query, pages it should find, kind)
QUERIES: list[tuple[str, list[str], str]] = [
    ("deploy freeze", ["notes/deploy-freeze"], "keyword"),
    ("WAL archiving", ["notes/incident-2026-03"], "keyword"),
    ("Ali", ["people/alice"], "keyword"),
    ("Okta two-factor", ["notes/sso"], "keyword"),
    ("CSV export", ["notes/customer-feedback"], "keyword"),
    ("Globex procurement", ["companies/globex", "people/dana"], "keyword"),
    ("halt shipping before the weekend", ["notes/deploy-freeze"], "paraphrase"),
    ("what happened during the postgres downtime", ["notes/incident-2026-03"], "paraphrase"),
    ("how many vacation days do we get", ["notes/vacation-policy"], "paraphrase"),
    ("when is my wage reviewed", ["notes/salary-bands"], "paraphrase"),
    ("recruiting new people", ["notes/hiring-plan"], "paraphrase"),
    ("rules for distributed work", ["notes/remote-policy"], "paraphrase"),
    ("relocating to a new workplace", ["notes/office-move"], "paraphrase"),
    ("where are credentials kept", ["notes/secrets"], "paraphrase"),
    ("restore the db from a snapshot", ["notes/backup-strategy"], "paraphrase"),
    ("authentication for internal tools", ["notes/sso"], "paraphrase"),
    ("how quick must screens appear", ["notes/perf-budget"], "paraphrase"),
    ("reduce the monthly expense of hosting", ["notes/cloud-spend"], "paraphrase"),
    ("payment provider migration", ["notes/roadmap-q3", "companies/acme"], "paraphrase"),
    ("who checks contracts with suppliers", ["people/carol", "people/dana"], "paraphrase"),
    ("is there a pet in the office", ["notes/office-dog"], "paraphrase"),
    ("when do we raise money from VCs", ["notes/investor-update"], "paraphrase"),
    ("new computer for engineers", ["notes/hardware-policy", "notes/onboarding"], "paraphrase"),
]
