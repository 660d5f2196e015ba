"""The board's schema: ordered migrations, applied on opening by the storage layer's runner
(:meth:`etclib.storage.database.Database.apply`), and the tables ``migrate`` copies.

Written once in SQL every engine accepts; :meth:`etclib.storage.Dialect.ddl` turns a statement
into the engine's (a sequence on SQLite is a row of ``sequences``; ``BLOB`` is ``BYTEA`` on
PostgreSQL; a ``rowid`` column is SQLite's own).
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            "CREATE SEQUENCE job_ids START 1",
            "CREATE SEQUENCE score_ids START 1",
            """CREATE TABLE submissions (
                id VARCHAR PRIMARY KEY,
                kind VARCHAR NOT NULL,          -- submission | baseline | reported
                created_at TIMESTAMP NOT NULL,
                split VARCHAR NOT NULL,
                name VARCHAR NOT NULL,
                team VARCHAR,
                contact VARCHAR,                -- never shown publicly
                submitter_key VARCHAR,          -- sha256 of the key the daily limit counts by
                model_url VARCHAR,
                paper_url VARCHAR,
                description VARCHAR,
                setting VARCHAR,
                saw_test VARCHAR,
                file_name VARCHAR,
                file_sha256 VARCHAR,
                file_format VARCHAR,
                file_bytes BIGINT,
                n_items INTEGER,
                corpus_hash VARCHAR,
                warnings VARCHAR,               -- JSON list
                baseline_key VARCHAR,
                visibility VARCHAR NOT NULL,    -- public | hidden | deleted
                status VARCHAR NOT NULL,        -- latest of status_history
                status_message VARCHAR
            )""",
            """CREATE TABLE predictions (
                submission_id VARCHAR NOT NULL,
                item_index INTEGER NOT NULL,
                dialogue_id INTEGER NOT NULL,
                turn INTEGER NOT NULL,
                role VARCHAR NOT NULL,
                prediction VARCHAR NOT NULL
            )""",
            """CREATE TABLE status_history (
                submission_id VARCHAR NOT NULL,
                happened_at TIMESTAMP NOT NULL,
                status VARCHAR NOT NULL,
                message VARCHAR
            )""",
            """CREATE TABLE jobs (
                id BIGINT PRIMARY KEY,
                submission_id VARCHAR NOT NULL,
                stage VARCHAR NOT NULL,         -- lexical | bertscore | judge
                status VARCHAR NOT NULL,        -- queued | running | done | failed
                attempts INTEGER NOT NULL,
                created_at TIMESTAMP NOT NULL,
                claimed_at TIMESTAMP,
                claimed_by VARCHAR,
                finished_at TIMESTAMP,
                error VARCHAR,
                options VARCHAR                 -- JSON of metric options
            )""",
            """CREATE TABLE scores (
                id BIGINT PRIMARY KEY,
                submission_id VARCHAR NOT NULL,
                job_id BIGINT,
                metric_group VARCHAR NOT NULL,  -- bleu | rouge | bertscore | judge | reported
                signature VARCHAR NOT NULL,     -- canonical JSON of the signature
                created_at TIMESTAMP NOT NULL,
                n_items INTEGER,
                scores VARCHAR NOT NULL,        -- JSON: key -> value
                extras VARCHAR,                 -- JSON: run-level extras
                breakdown VARCHAR               -- JSON: role / category / turn
            )""",
            """CREATE TABLE score_arrays (
                score_id BIGINT NOT NULL,
                name VARCHAR NOT NULL,
                dtype VARCHAR NOT NULL,
                shape VARCHAR NOT NULL,
                data BLOB NOT NULL
            )""",
            """CREATE TABLE item_scores (
                score_id BIGINT NOT NULL,
                item_index INTEGER NOT NULL,
                scores VARCHAR,                 -- JSON: this item's scores
                details VARCHAR                 -- JSON: e.g. judge units and labels
            )""",
            """CREATE TABLE moderation_log (
                happened_at TIMESTAMP NOT NULL,
                submission_id VARCHAR,
                action VARCHAR NOT NULL,
                note VARCHAR
            )""",
            """CREATE TABLE hub_pushes (
                happened_at TIMESTAMP NOT NULL,
                repo VARCHAR,
                ok BOOLEAN NOT NULL,
                message VARCHAR
            )""",
        ],
    ),
    (
        4,
        [
            # jobs.error is public (the status message); the provider's text is for admins only
            "ALTER TABLE jobs ADD COLUMN error_detail VARCHAR",
            # failures stored before may quote a provider: moved to the admin column
            "UPDATE jobs SET error_detail = error, error = 'the scoring failed; an admin can "
            "see why and re-score it' WHERE status = 'failed' AND error IS NOT NULL",
            "UPDATE submissions SET status_message = 'a scoring stage failed; an admin can see "
            "why and re-score it' WHERE id IN (SELECT submission_id FROM jobs "
            "WHERE status = 'failed')",
            "UPDATE status_history SET message = 'a scoring stage failed; an admin can see why "
            "and re-score it' WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.submission_id = "
            "status_history.submission_id AND j.status = 'failed' AND j.error_detail IS NOT NULL "
            "AND strpos(status_history.message, j.error_detail) > 0)",
            # The account a submitter signed in with (OIDC), shown beside the team name.
            """CREATE TABLE submission_accounts (
                submission_id VARCHAR PRIMARY KEY,
                account VARCHAR NOT NULL,       -- shown publicly (the claim the site shows)
                issuer VARCHAR                  -- the identity provider that verified it
            )""",
        ],
    ),
    (
        5,
        [
            # duplicates are found by content; file_sha256 is the file's bytes again
            "ALTER TABLE submissions ADD COLUMN content_sha256 VARCHAR",
            # queue fairness: crashes in flight, crashes alone, the backoff's end
            "ALTER TABLE jobs ADD COLUMN crashes INTEGER DEFAULT 0",
            "ALTER TABLE jobs ADD COLUMN solo_crashes INTEGER DEFAULT 0",
            "ALTER TABLE jobs ADD COLUMN not_before TIMESTAMP",
        ],
    ),
    (
        6,
        [
            # the leaderboard track (etclib.tracks); erc predictions hold label sets as "joy;surprise"
            "ALTER TABLE submissions ADD COLUMN track VARCHAR DEFAULT 'transcription'",
            "UPDATE submissions SET track = 'transcription' WHERE track IS NULL",
        ],
    ),
    (
        7,
        [
            # the lease of a running job (docs/deploy.md): its process and last heartbeat
            "ALTER TABLE jobs ADD COLUMN claimed_process VARCHAR",
            "ALTER TABLE jobs ADD COLUMN heartbeat_at TIMESTAMP",
            # a job's result is stored once, however many workers ran it (one slow, not dead)
            "CREATE UNIQUE INDEX scores_once ON scores (job_id, metric_group, signature)",
            # a submission's history in insertion order, as SQLite's rowid keeps it
            "ALTER TABLE status_history ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY",
        ],
    ),
    (
        8,
        [
            # rate limits that a reload or another replica does not reset (leaderboard.limits)
            """CREATE TABLE limit_events (
                bucket VARCHAR NOT NULL,        -- e.g. admin-failure, chat, chat-model:openai
                key_hash VARCHAR NOT NULL,      -- sha256 of the visitor's key (or "all")
                happened_at TIMESTAMP NOT NULL
            )""",
            "CREATE INDEX limit_events_by_key ON limit_events (bucket, key_hash, happened_at)",
        ],
    ),
    (
        9,
        [
            # model facts a submitter gives (docs/leaderboard.md "Submission details")
            "ALTER TABLE submissions ADD COLUMN parameters VARCHAR",  # billions, as given
            "ALTER TABLE submissions ADD COLUMN open_weights VARCHAR",  # yes | no | '' (not said)
            "ALTER TABLE submissions ADD COLUMN licence VARCHAR",
            # who may change an entry (leaderboard.owners); visibility gains private and withdrawn
            "ALTER TABLE submissions ADD COLUMN owner_hash VARCHAR",
            "ALTER TABLE submissions ADD COLUMN edit_key_hash VARCHAR",
            """CREATE TABLE entry_changes (
                submission_id VARCHAR NOT NULL,
                happened_at TIMESTAMP NOT NULL,
                what VARCHAR NOT NULL,          -- the field changed, or visibility
                old_value VARCHAR,
                new_value VARCHAR,
                changed_by VARCHAR NOT NULL     -- its owner: signed-in account | edit key
            )""",
            "CREATE INDEX entry_changes_by_entry ON entry_changes (submission_id, happened_at)",
        ],
    ),
]
SCHEMA_VERSION = max(version for version, _ in MIGRATIONS)
#: Every table ``migrate`` copies, parents first (schema_version is each board's own).
TABLES: tuple[str, ...] = (
    "submissions",
    "submission_accounts",
    "predictions",
    "status_history",
    "jobs",
    "scores",
    "score_arrays",
    "item_scores",
    "moderation_log",
    "hub_pushes",
    "limit_events",
    "entry_changes",
)
#: Sequences continued past the largest copied id: sequence -> (table, column).
SEQUENCES = {"job_ids": ("jobs", "id"), "score_ids": ("scores", "id")}
