-- The device database (DraftStore), as its migrations leave it: the contract.
-- Kept once: the build compiles this file into DraftStore (Plugins/SchemaConstants), whose migrations run
-- exactly these statements, in order. Migrations are append-only: a shipped one is never edited; a change is
-- a new migration appended below.
-- Format: a line "-- migration: ID" starts a migration (ID as GRDB records it in `grdb_migrations`); every statement
-- below it belongs to it. A statement ends with a ";" at the end of a line. Other lines that start with "--"
-- are comments. Where a migration also runs Swift code (converting rows), that code is registered under the
-- same ID and runs after the statements; a migration may be Swift code alone, with no statement here.

-- migration: v1-device-schema

-- Every version of every form ever imported or pulled; a record names the version it was started on.
CREATE TABLE forms (
    id TEXT NOT NULL,
    version INTEGER NOT NULL,
    title TEXT NOT NULL,
    definition TEXT NOT NULL,
    imported_at INTEGER NOT NULL,
    PRIMARY KEY (id, version)
) WITHOUT ROWID;

-- One row per record. `fields` is a JSON object keyed by field id; each entry holds the current value
-- and its sync base and metadata: {"v": answer, "b": base answer, "r": base revision, "h": HLC, "d": device}.
-- One row per record (not one per field) keeps a record a single B-tree write: about ten times the
-- throughput of a row per field when syncing, and an edit is one json_set on one row.
CREATE TABLE records (
    id TEXT PRIMARY KEY NOT NULL,
    form_id TEXT NOT NULL,
    form_version INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('draft', 'submitted', 'deleted')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    server_revision INTEGER NOT NULL DEFAULT 0,
    fields TEXT NOT NULL DEFAULT '{}',
    FOREIGN KEY (form_id, form_version) REFERENCES forms (id, version)
);

-- Covers listings (newest first, by state) without reading the records' field values.
CREATE INDEX records_by_state ON records (state, updated_at, id, form_id, form_version, created_at);

-- The snapshot of each open presentation, so Cancel reverts only that presentation's edits.
-- Written when a sheet opens, removed when it ends; one left behind by a killed process is a
-- non-cancel dismissal (everything kept), resolved on the next open.
CREATE TABLE presentations (
    id TEXT PRIMARY KEY NOT NULL,
    record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('new', 'resume', 'edit')),
    owner TEXT NOT NULL,
    opened_at INTEGER NOT NULL,
    snapshot_state TEXT NOT NULL,
    snapshot_updated_at INTEGER NOT NULL,
    snapshot_fields TEXT NOT NULL
);

CREATE UNIQUE INDEX presentations_by_record ON presentations (record_id);

-- Changes not yet acknowledged by the server, written in the same transaction as the change itself.
CREATE TABLE outbox (
    mutation_id INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id TEXT NOT NULL,
    presentation_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('create', 'set', 'submit', 'delete')),
    form_id TEXT,
    form_version INTEGER,
    field_id TEXT,
    value TEXT,
    base_revision INTEGER NOT NULL,
    hlc INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE INDEX outbox_by_record ON outbox (record_id);

-- Values that lost a merge, with both sides, whatever the policy; `manual` ones wait for a person.
CREATE TABLE conflicts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id TEXT NOT NULL,
    field_id TEXT NOT NULL,
    policy TEXT NOT NULL,
    local_value TEXT,
    local_hlc INTEGER,
    local_device TEXT,
    remote_value TEXT,
    remote_hlc INTEGER,
    remote_device TEXT,
    detected_at INTEGER NOT NULL,
    resolved_at INTEGER
);

CREATE INDEX conflicts_by_record ON conflicts (record_id);

-- One row: this device's id, the pull cursor and the hybrid logical clock's last reading.
CREATE TABLE sync_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    device_id TEXT NOT NULL,
    cursor TEXT,
    clock INTEGER NOT NULL DEFAULT 0,
    last_sync_at INTEGER
);

-- migration: v2-sync-in-flight

-- The coalesced mutation of a record while it is being pushed: its id and exact body are committed before
-- the request is sent, so a retry (after a crash, a cut connection or a lost response) sends the same id and
-- content, and the server answers with its stored outcome instead of applying it twice. It covers the
-- record's outbox rows up to `last_outbox_id`; edits made meanwhile wait for the next push.
CREATE TABLE sent_mutations (
    mutation_id TEXT PRIMARY KEY NOT NULL,
    record_id TEXT NOT NULL UNIQUE,
    last_outbox_id INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

-- migration: v3-record-fields

-- Records keep the server's fields exactly as the server sends them (`fields`: the record representation
-- shared by device, wire and server, see Schema/record-fields.schema.json) and, beside them, the edits made
-- on this device that the server has not acknowledged yet (`local`: an object of answers, null for a
-- cleared field). What a person sees is `fields.values` overlaid by `local`. Existing rows are converted.
ALTER TABLE records ADD COLUMN local TEXT NOT NULL DEFAULT '{}';

-- migration: v4-outbox-by-field

-- An edit's base revision is the oldest base among the record's unsent rows for that field (a record's
-- `create` row counts for every field it set): found through this index, not by reading every unsent row
-- of the record, which grows with each edit made offline.
CREATE INDEX outbox_by_record_field ON outbox (record_id, field_id, base_revision);

-- migration: v5-record-reviews

-- The office's review of a submitted record as the server last sent it (state: received, hasIssues,
-- approved, rejected, edited; and the latest reviewer's comment), so the collector sees what needs changes.
-- Its own table, one row per reviewed record: listings join it, and records never reviewed cost nothing.
CREATE TABLE record_reviews (
    record_id TEXT PRIMARY KEY NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    state TEXT NOT NULL CHECK (state IN ('received', 'hasIssues', 'approved', 'rejected', 'edited')),
    comment TEXT
) WITHOUT ROWID;

-- migration: v6-record-edits

-- A record's unsent edits, one row per field (NULL value: the field was cleared), instead of one JSON object
-- in `records.local`: an edit writes its own small row, where rewriting the object cost every edit of a
-- record with thousands of fields (repeat instances) a parse and a rewrite of all of them. WITHOUT ROWID:
-- SQLite reports no change of it to observers, so every write of it also writes the record's row
-- (`updated_at`, `fields`), which is what observations of records watch.
CREATE TABLE record_edits (
    record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT,
    PRIMARY KEY (record_id, key)
) WITHOUT ROWID;
INSERT INTO record_edits (record_id, key, value) SELECT r.id, j.key, j.value FROM records r, json_each(r.local) j;
ALTER TABLE records DROP COLUMN local;

-- migration: v7-attachments

-- The attachments' bytes on this device, by content: `attachments/<sha256>` under the home holds them once
-- `stored` is 1 (written to a temporary file, fsynced, renamed, the directory fsynced). A record refers to
-- one by hash in an answer (`{"attachment": {"sha256": …, "bytes": …, "type": …, "name": …}}`); this row
-- keeps what moving the bytes needs. `upload`: 'waiting' while the server may lack bytes attached here,
-- 'done' once it holds them all, verified; 'none' for bytes that came from the server. `download`:
-- 'wanted' when a record that refers to it was opened (or downloads run ahead of time) and the bytes are
-- not here yet. `transferred`: bytes the server last said it holds (upload) or bytes in the partial file
-- (download). `failures` and `retry_at` (ms) back off one attachment that keeps failing without holding
-- up records or other attachments. `attached_by`: the presentation that attached it, kept while that
-- presentation is open so garbage collection leaves it alone.
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY NOT NULL CHECK (length(sha256) = 64),
    bytes INTEGER NOT NULL CHECK (bytes >= 0),
    type TEXT NOT NULL,
    stored INTEGER NOT NULL DEFAULT 0 CHECK (stored IN (0, 1)),
    upload TEXT NOT NULL DEFAULT 'none' CHECK (upload IN ('none', 'waiting', 'done')),
    download TEXT NOT NULL DEFAULT 'none' CHECK (download IN ('none', 'wanted')),
    transferred INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    retry_at INTEGER,
    last_error TEXT,
    attached_by TEXT,
    added_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Every attachment something on this device still refers to: a record's synced fields and unsent edits,
-- the snapshot an open presentation's Cancel returns to, and both sides of a logged conflict. Garbage
-- collection removes only blobs outside it (and not attached by an open presentation).
CREATE VIEW attachment_references (record_id, sha256, bytes, type, name) AS
    SELECT r.id, json_extract(v.value, '$.attachment.sha256'), json_extract(v.value, '$.attachment.bytes'),
        json_extract(v.value, '$.attachment.type'), json_extract(v.value, '$.attachment.name')
    FROM records r, json_each(r.fields, '$.values') v
    WHERE v.type = 'object' AND json_type(v.value, '$.attachment') = 'object'
    UNION ALL
    SELECT e.record_id, json_extract(e.value, '$.attachment.sha256'), json_extract(e.value, '$.attachment.bytes'),
        json_extract(e.value, '$.attachment.type'), json_extract(e.value, '$.attachment.name')
    FROM record_edits e WHERE json_type(e.value, '$.attachment') = 'object'
    UNION ALL
    SELECT p.record_id, json_extract(v.value, '$.attachment.sha256'), json_extract(v.value, '$.attachment.bytes'),
        json_extract(v.value, '$.attachment.type'), json_extract(v.value, '$.attachment.name')
    FROM presentations p, json_each(p.snapshot_fields, '$.fields.values') v
    WHERE v.type = 'object' AND json_type(v.value, '$.attachment') = 'object'
    UNION ALL
    SELECT p.record_id, json_extract(v.value, '$.attachment.sha256'), json_extract(v.value, '$.attachment.bytes'),
        json_extract(v.value, '$.attachment.type'), json_extract(v.value, '$.attachment.name')
    FROM presentations p, json_each(p.snapshot_fields, '$.local') v
    WHERE v.type = 'object' AND json_type(v.value, '$.attachment') = 'object'
    UNION ALL
    SELECT c.record_id, json_extract(c.local_value, '$.attachment.sha256'), json_extract(c.local_value, '$.attachment.bytes'),
        json_extract(c.local_value, '$.attachment.type'), json_extract(c.local_value, '$.attachment.name')
    FROM conflicts c WHERE json_type(c.local_value, '$.attachment') = 'object'
    UNION ALL
    SELECT c.record_id, json_extract(c.remote_value, '$.attachment.sha256'), json_extract(c.remote_value, '$.attachment.bytes'),
        json_extract(c.remote_value, '$.attachment.type'), json_extract(c.remote_value, '$.attachment.name')
    FROM conflicts c WHERE json_type(c.remote_value, '$.attachment') = 'object';

-- The attachments the server said it still waits for, per record, from the pull page's `missingAttachments`
-- (a JSON array of hashes; NULL when none): the record shows as waiting for them.
ALTER TABLE records ADD COLUMN missing_attachments TEXT;

-- migration: v8-attachment-references-once

-- The same view, with the answer read once: every answer something on this device still holds, as
-- (record, answer JSON) rows — synced values, unsent edits, both parts of an open presentation's snapshot,
-- both sides of a logged conflict — and the reference taken out of them in one place. `json_each` rows are
-- kept to objects first (`json_each` gives a text answer as bare text, which `json_type` cannot read).
DROP VIEW attachment_references;
CREATE VIEW attachment_references (record_id, sha256, bytes, type, name) AS
    WITH answers (record_id, value) AS (
        SELECT r.id, v.value FROM records r, json_each(r.fields, '$.values') v WHERE v.type = 'object'
        UNION ALL
        SELECT e.record_id, e.value FROM record_edits e
        UNION ALL
        SELECT p.record_id, v.value FROM presentations p, json_each(p.snapshot_fields, '$.fields.values') v WHERE v.type = 'object'
        UNION ALL
        SELECT p.record_id, v.value FROM presentations p, json_each(p.snapshot_fields, '$.local') v WHERE v.type = 'object'
        UNION ALL
        SELECT c.record_id, c.local_value FROM conflicts c
        UNION ALL
        SELECT c.record_id, c.remote_value FROM conflicts c
    )
    SELECT record_id, json_extract(value, '$.attachment.sha256'), json_extract(value, '$.attachment.bytes'),
        json_extract(value, '$.attachment.type'), json_extract(value, '$.attachment.name')
    FROM answers WHERE json_type(value, '$.attachment') = 'object';

-- migration: v9-conflict-reasons

-- Why the server refused a change, for a conflict logged with the policy `rejected` (the problem's detail, as
-- the server wrote it for a person: what was wrong and what to do); NULL for every other entry.
ALTER TABLE conflicts ADD COLUMN reason TEXT;

-- migration: v10-device-settings

-- The device's own settings, by name. `language`: the language forms are shown in (a form's language as it
-- names it, its code like fr, or its name like Français); a form not written in it shows its default language.
CREATE TABLE device_settings (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

-- migration: v11-record-times

-- A record's times are its author's: a record that came from the server takes the times the server sent
-- (when it was created, last changed and submitted where that happened), not when it arrived here. When it
-- was last submitted, here or where it was made (NULL: never, or not known for records stored before).
ALTER TABLE records ADD COLUMN submitted_at INTEGER;
-- A conflict entry the server sent because this device's value lost to another device's push: the server's
-- log id, so a page applied again logs it once.
ALTER TABLE conflicts ADD COLUMN server_id INTEGER;
CREATE UNIQUE INDEX conflicts_by_server_id ON conflicts (server_id) WHERE server_id IS NOT NULL;

-- migration: v12-entities

-- Each entity list this device's forms use, as the server last sent it (docs/entity-lists.md, "On the device"):
-- one row per entity in scope, its label and properties as the `RecordFields` bytes the feed page carried
-- (stored as received), the label read out of them for the lists a form offers, its revision, its position in
-- its list's feed, its creator and assignee. A rowid table, as `entity_local_changes`: SQLite reports their
-- changes to observers (`observeEntities`), which it does not for WITHOUT ROWID tables.
CREATE TABLE entities (
    list TEXT NOT NULL,
    id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    sequence INTEGER NOT NULL,
    creator TEXT NOT NULL,
    assignee TEXT,
    fields TEXT NOT NULL,
    label TEXT,
    PRIMARY KEY (list, id)
);
CREATE INDEX entities_by_label ON entities (list, label, id);

-- Each list's feed cursor: the `cursor` of the last applied page of `GET …/entities/{list}/changes`.
CREATE TABLE entity_cursors (
    list TEXT PRIMARY KEY NOT NULL,
    cursor INTEGER NOT NULL
) WITHOUT ROWID;

-- What this device's submitted records did to entities that the server has not sent back yet, one row per
-- entity and property (`label` the label; the empty property marks an entity a record created here): the value
-- as the record stores it (answer JSON, NULL when cleared) and the stamp the record's field carries (clock and
-- writer). A form reads the server's entity with these on top where their stamp is newer; a row leaves when the
-- server's entity carries a stamp at least as new for its property (for the mark: once the server sends it).
CREATE TABLE entity_local_changes (
    list TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    property TEXT NOT NULL,
    record_id TEXT NOT NULL,
    value TEXT,
    hlc INTEGER NOT NULL,
    writer TEXT NOT NULL,
    PRIMARY KEY (list, entity_id, property)
);

-- migration: v13-encrypted-store

-- The store's encryption (docs/device-encryption.md): every answer value, unsent edit, presentation snapshot,
-- conflict value, in-flight mutation body and entity value is sealed with the device data key
-- (ChaCha20-Poly1305, a fresh nonce per value, the value's place — table, record id, field key — as associated
-- data); ids, form ids, states, times, stamps and sync bookkeeping stay in clear. One row, made when the store
-- first gets a key: the salt a passphrase is derived with, a check value sealed with the key (a wrong key is
-- refused before anything is read), and how far the conversion of values written in clear has got. A database
-- that held values in clear is converted after this migration, in committed batches (`encrypting` until the
-- last one): the rows with values still in text, and for records, whose sealed fields are JSON text too, the
-- last rowid converted. A store opened without encryption has no row.
CREATE TABLE device_encryption (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    salt BLOB NOT NULL,
    key_check BLOB NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('encrypting', 'encrypted')),
    records_done INTEGER NOT NULL DEFAULT 0
);

-- The attachments still referred to, read through the store's SQL functions that open sealed values
-- (`fs_open`, `fs_open_fields`, each given the value's place): the same rows as v8's view.
DROP VIEW attachment_references;
CREATE VIEW attachment_references (record_id, sha256, bytes, type, name) AS
    WITH answers (record_id, value) AS (
        SELECT r.id, v.value FROM records r, json_each(fs_open_fields(r.fields, 'record', r.id), '$.values') v WHERE v.type = 'object'
        UNION ALL
        SELECT e.record_id, fs_open(e.value, 'edit', e.record_id, e.key) FROM record_edits e
        UNION ALL
        SELECT p.record_id, v.value FROM presentations p, json_each(fs_open(p.snapshot_fields, 'snapshot', p.id, p.record_id), '$.fields.values') v WHERE v.type = 'object'
        UNION ALL
        SELECT p.record_id, v.value FROM presentations p, json_each(fs_open(p.snapshot_fields, 'snapshot', p.id, p.record_id), '$.local') v WHERE v.type = 'object'
        UNION ALL
        SELECT c.record_id, fs_open(c.local_value, 'conflict', c.record_id, c.field_id, 'local') FROM conflicts c
        UNION ALL
        SELECT c.record_id, fs_open(c.remote_value, 'conflict', c.record_id, c.field_id, 'remote') FROM conflicts c
    )
    SELECT record_id, json_extract(value, '$.attachment.sha256'), json_extract(value, '$.attachment.bytes'),
        json_extract(value, '$.attachment.type'), json_extract(value, '$.attachment.name')
    FROM answers WHERE json_type(value, '$.attachment') = 'object';

-- migration: v14-project-keys
-- The project's current public key for sensitive fields, as the server sent it with the forms: a sensitive
-- answer is sealed to it when its change is frozen for sending (docs/sensitive-fields.md).
CREATE TABLE project_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    key_id TEXT NOT NULL,
    public_key TEXT NOT NULL
);
-- The plaintext of each sensitive answer this device sealed, by record and answer key, with the ciphertext it
-- was sealed to: where the server sends that same ciphertext back (an outcome, a pull), the device shows its
-- own plaintext instead; a ciphertext it did not make (another device's answer) stays sealed.
CREATE TABLE sealed_plaintexts (
    record_id TEXT NOT NULL,
    key TEXT NOT NULL,
    ct TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (record_id, key)
) WITHOUT ROWID;

-- migration: v15-signing-key
-- Signed submissions (docs/signed-submissions.md). The device's Ed25519 key pair, made at its first login:
-- the private half sealed with the device data key (`fs_seal`, place `signing-key`), the public half in clear
-- (base64 of its 32 raw bytes), and the login it was last registered with (a SHA-256 of the server's URL and
-- the token, never the token itself), so a sync registers it once with a login that does not hold it yet.
CREATE TABLE signing_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    private_key BLOB NOT NULL,
    public_key TEXT NOT NULL,
    registered_for TEXT,
    created_at INTEGER NOT NULL
);
-- Each frozen mutation's signature (base64 Ed25519 over its body, which is its canonical bytes), made when it
-- is frozen and sent with it every time; NULL for a mutation frozen before this migration, signed when it is
-- next sent.
ALTER TABLE sent_mutations ADD COLUMN signature TEXT;

-- migration: v16-entity-label-search
-- A search index of the entity labels (docs/entity-lists.md, "On the device"): the trigrams of each label
-- (FTS5's trigram tokenizer, ignoring case), so that a choice's search for text of three characters or more
-- finds the few entities whose label contains it without walking every label of its list. Its content is the
-- `label` column of `entities` (nothing stored twice), kept by the triggers below in the statement that writes
-- the entity; a label changed to itself leaves the index alone. Labels are in clear, as the column it indexes.
CREATE VIRTUAL TABLE entity_label_search USING fts5(label, content = 'entities', content_rowid = 'rowid', tokenize = 'trigram');
INSERT INTO entity_label_search (entity_label_search) VALUES ('rebuild');
CREATE TRIGGER entities_label_search_insert AFTER INSERT ON entities BEGIN INSERT INTO entity_label_search (rowid, label) VALUES (new.rowid, new.label); END;
CREATE TRIGGER entities_label_search_delete AFTER DELETE ON entities BEGIN INSERT INTO entity_label_search (entity_label_search, rowid, label) VALUES ('delete', old.rowid, old.label); END;
CREATE TRIGGER entities_label_search_update AFTER UPDATE OF label ON entities WHEN old.label IS NOT new.label BEGIN INSERT INTO entity_label_search (entity_label_search, rowid, label) VALUES ('delete', old.rowid, old.label); INSERT INTO entity_label_search (rowid, label) VALUES (new.rowid, new.label); END;
