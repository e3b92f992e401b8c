-- The server's database on SQLite (fieldsheet-server's default storage), as its migrations leave it.
-- Kept once: the build compiles this file into ServerSQLite (Plugins/SchemaConstants), whose migrations run
-- exactly these statements, in order. Migrations are append-only: a shipped one is never edited; a change is
-- a new migration appended below.
-- Format: a line "-- migration: ID" starts a migration (ID as GRDB records it in `grdb_migrations`); every statement
-- below it belongs to it. A statement ends with a ";" at the end of a line. Other lines that start with "--"
-- are comments. Where a migration also runs Swift code (converting rows), that code is registered under the
-- same ID and runs after the statements; a migration may be Swift code alone, with no statement here.

-- migration: v1

-- Projects, users and tokens, published forms, records (one row each, fields as JSON), stored
-- mutation outcomes and the conflict log.
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    last_sequence INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL
);
CREATE TABLE memberships (
    user_id INTEGER NOT NULL REFERENCES users (id),
    project_id INTEGER NOT NULL REFERENCES projects (id),
    role TEXT NOT NULL CHECK (role IN ('collector', 'reviewer', 'admin')),
    PRIMARY KEY (user_id, project_id)
) WITHOUT ROWID;
CREATE TABLE tokens (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id),
    token_hash BLOB NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    revoked_at REAL
);
CREATE TABLE forms (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    form_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    definition TEXT NOT NULL,
    digest TEXT NOT NULL,
    published_at REAL NOT NULL,
    PRIMARY KEY (project_id, form_id, version)
) WITHOUT ROWID;
CREATE TABLE records (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    id TEXT NOT NULL,
    form_id TEXT NOT NULL,
    form_version INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('draft', 'submitted', 'deleted')),
    author_id INTEGER NOT NULL REFERENCES users (id),
    shared INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    sequence INTEGER NOT NULL,
    fields TEXT NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (project_id, id)
);
CREATE UNIQUE INDEX records_by_sequence ON records (project_id, sequence);
CREATE INDEX records_by_form ON records (project_id, form_id, id);
CREATE TABLE mutations (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    client_id TEXT NOT NULL,
    mutation_id TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users (id),
    digest BLOB NOT NULL,
    outcome TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (project_id, client_id, mutation_id)
);
CREATE TABLE conflicts (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    record_id TEXT NOT NULL,
    mutation_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    open INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX conflicts_by_record ON conflicts (project_id, record_id);

-- migration: lowercase-record-ids

-- Databases written before ids were stored in lowercase held `UUID.uuidString`'s uppercase.
UPDATE records SET id = lower(id) WHERE id <> lower(id);
UPDATE conflicts SET record_id = lower(record_id) WHERE record_id <> lower(record_id);

-- migration: v2-record-fields

-- Record fields move from the first version's shape (every field an object repeating its revision, clock and
-- device) to the one record representation (Schema/record-fields.schema.json). The schema does not change;
-- the conversion is Swift code (RecordFieldsMigration).

-- migration: v3-review-history

-- The office side. Records carry their review state (received once submitted; hasIssues, approved, rejected
-- set by reviewers; edited after the collector changed a record sent back) with the latest review comment,
-- when the server first stored, first saw submitted and last changed them, and the device they came from.
-- Records stored before get their last change as their creation time, and `received` when shared.
ALTER TABLE records ADD COLUMN review_state TEXT CHECK (review_state IN ('received', 'hasIssues', 'approved', 'rejected', 'edited'));
ALTER TABLE records ADD COLUMN review_comment TEXT;
ALTER TABLE records ADD COLUMN created_at REAL;
ALTER TABLE records ADD COLUMN submitted_at REAL;
ALTER TABLE records ADD COLUMN device TEXT;
UPDATE records SET created_at = updated_at;
UPDATE records SET review_state = 'received', submitted_at = updated_at WHERE shared;
-- The conflict log is resolved on the server too: by whom, when, keeping which side.
ALTER TABLE conflicts ADD COLUMN resolved_at REAL;
ALTER TABLE conflicts ADD COLUMN resolved_by INTEGER REFERENCES users (id);
ALTER TABLE conflicts ADD COLUMN resolution TEXT CHECK (resolution IN ('server', 'client'));
CREATE INDEX conflicts_by_project ON conflicts (project_id, open, id);
-- Every applied change of a record: who (user), when, from which device, and what changed (JSON: fields from
-- what to what, the state, the review with its comment, a resolved conflict). Written in the change's own
-- transaction, one plain insert per change.
CREATE TABLE record_history (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    record_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('change', 'review', 'resolution')),
    user_id INTEGER NOT NULL REFERENCES users (id),
    client_id TEXT,
    detail TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX record_history_by_record ON record_history (project_id, record_id, id);

-- migration: v4-console

-- The web console. Its submissions table pages by keyset (last change or creation time, then id) within one
-- form, optionally of one review state, so a page costs the same on the first and the thousandth screen.
CREATE INDEX records_by_form_updated ON records (project_id, form_id, updated_at, id);
CREATE INDEX records_by_form_created ON records (project_id, form_id, (coalesce(created_at, updated_at)), id);
CREATE INDEX records_by_form_review ON records (project_id, form_id, review_state, updated_at, id);
-- Signed-in browsers: the SHA-256 of the session cookie (never the cookie itself), the token it was opened
-- with (a revoked token ends its sessions), the session's CSRF token and when it expires.
CREATE TABLE console_sessions (
    id_hash BLOB PRIMARY KEY,
    token_id INTEGER NOT NULL REFERENCES tokens (id),
    csrf TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

-- migration: v5-attachments

-- Media attachments. Their bytes are files in the data directory (attachments/<project id>/<sha256>); the
-- database knows which of them are stored and verified, and which records reference which hash (kept at
-- push time from the records' values, one row per field holding an attachment), so a pull can say what a
-- record still waits for and a download is allowed only to someone who may read a referencing record.
CREATE TABLE attachments (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    stored_at REAL NOT NULL,
    PRIMARY KEY (project_id, sha256)
) WITHOUT ROWID;
CREATE TABLE attachment_refs (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    record_id TEXT NOT NULL,
    field_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (project_id, record_id, field_id)
) WITHOUT ROWID;
CREATE INDEX attachment_refs_by_hash ON attachment_refs (project_id, sha256);

-- migration: v6-attachment-collection

-- Garbage collection of attachments (the rule: Sources/ServerStorage/AttachmentCollection.swift). Conflict-log
-- entries keep the attachments either side holds: one row per project, hash and record, written with the entry
-- in the push's transaction and never removed (nor are entries). Existing entries are indexed here.
CREATE TABLE conflict_attachment_refs (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (project_id, sha256, record_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO conflict_attachment_refs (project_id, sha256, record_id)
SELECT project_id, json_extract(entry, '$.server.value.attachment.sha256'), record_id FROM conflicts
WHERE json_extract(entry, '$.server.value.attachment.sha256') IS NOT NULL;
INSERT OR IGNORE INTO conflict_attachment_refs (project_id, sha256, record_id)
SELECT project_id, json_extract(entry, '$.client.value.attachment.sha256'), record_id FROM conflicts
WHERE json_extract(entry, '$.client.value.attachment.sha256') IS NOT NULL;
-- When a sweep first found a stored attachment referenced by nothing; a sweep that finds it referenced again
-- forgets it. It is removed only once this (and its storing) is older than the grace period.
CREATE TABLE attachment_unreferenced (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    since REAL NOT NULL,
    PRIMARY KEY (project_id, sha256)
) WITHOUT ROWID;

-- migration: v7-attachment-holders

-- Attachments between members (the rules: README, "Attachments between members"). A hash proves nothing: a
-- member holds an attachment once they sent all its bytes (verified) or downloaded it through a record that
-- granted it. Each reference notes who put it into its record (`added_by`, kept while the field keeps the
-- same hash); it grants the bytes to those who may read its record only when that member holds them. Who
-- stored an attachment first is charged for it (`stored_by`, for the per-user quota); its media type is read
-- from its first bytes when it is stored (`media_type`; NULL for those stored before, read at download).
-- What was stored before this migration keeps the access it gave: every author of a record referencing it
-- holds it, and each reference counts as put there by its record's author.
ALTER TABLE attachment_refs ADD COLUMN added_by INTEGER NOT NULL DEFAULT 0;
UPDATE attachment_refs SET added_by = (
    SELECT r.author_id FROM records r WHERE r.project_id = attachment_refs.project_id AND r.id = attachment_refs.record_id);
ALTER TABLE attachments ADD COLUMN stored_by INTEGER;
ALTER TABLE attachments ADD COLUMN media_type TEXT;
CREATE TABLE attachment_holders (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (project_id, sha256, user_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO attachment_holders (project_id, sha256, user_id)
SELECT DISTINCT a.project_id, a.sha256, r.author_id FROM attachment_refs a
JOIN attachments s ON s.project_id = a.project_id AND s.sha256 = a.sha256
JOIN records r ON r.project_id = a.project_id AND r.id = a.record_id;

-- migration: v8-record-times

-- A record's times are its author's: `created_at`, `updated_at` and `submitted_at` now hold when that happened
-- on the device that made the change (the mutation says; the server's clock for a change made on the server
-- or by a device that does not say). When the server stored the latest change is `received_at`; records
-- stored before keep their arrival times in both.
ALTER TABLE records ADD COLUMN received_at REAL;
UPDATE records SET received_at = updated_at;
-- A conflict entry reaches the device whose value lost at its next pull: the sequence of the change that
-- logged it (the pull's range), and that device when it is not the one that pushed (which the push's outcome
-- told already).
ALTER TABLE conflicts ADD COLUMN sequence INTEGER;
ALTER TABLE conflicts ADD COLUMN loser TEXT;
CREATE INDEX conflicts_by_loser ON conflicts (project_id, loser, sequence) WHERE loser IS NOT NULL;

-- migration: v9-entities

-- Entity lists (docs/entity-lists.md). A list has declared properties (JSON: [{"kind","name"}], by name), a
-- scope (all, creator, assignee or property:NAME) and its own feed position: every change of one of its
-- entities takes the next number, inside the writing transaction, as a record change takes the project's.
CREATE TABLE entity_lists (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    name TEXT NOT NULL,
    properties TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT 'all',
    last_sequence INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    PRIMARY KEY (project_id, name)
) WITHOUT ROWID;
-- An entity: its id (made where it was created; a record's id when a record created it), its list, revision,
-- the position of its latest change in its list's feed, creator, assignee, a tombstone, its label (also in
-- `fields`, kept here for the console's table, ordered and searched by it) and its label and properties as
-- RecordFields JSON (Schema/record-fields.schema.json, the label under `label`).
CREATE TABLE entities (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    id TEXT NOT NULL,
    list TEXT NOT NULL,
    revision INTEGER NOT NULL,
    sequence INTEGER NOT NULL,
    creator_id INTEGER NOT NULL REFERENCES users (id),
    assignee_id INTEGER REFERENCES users (id),
    deleted INTEGER NOT NULL DEFAULT 0,
    label TEXT NOT NULL,
    fields TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, list) REFERENCES entity_lists (project_id, name)
) WITHOUT ROWID;
CREATE UNIQUE INDEX entities_by_sequence ON entities (project_id, list, sequence);
CREATE INDEX entities_by_label ON entities (project_id, list, label, id);
-- Every change of an entity: which record made it (NULL for an import, an assignment or a deletion on the
-- server), by whom, from which device, when, and what it set (JSON: fields from what to what). The record's
-- review state is read from the record (a rejected record's change stays applied; the console says so).
CREATE TABLE entity_history (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    entity_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('create', 'update', 'import', 'assign', 'delete')),
    record_id TEXT,
    user_id INTEGER NOT NULL REFERENCES users (id),
    client_id TEXT,
    detail TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX entity_history_by_entity ON entity_history (project_id, entity_id, id);
-- The losing values of entity properties, like the record conflict log's entries (ConflictEntry JSON).
CREATE TABLE entity_conflicts (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    entity_id TEXT NOT NULL,
    record_id TEXT NOT NULL,
    mutation_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX entity_conflicts_by_entity ON entity_conflicts (project_id, entity_id, id);
-- A member's properties in a project (a collector's district), read by `property:NAME` scopes.
CREATE TABLE user_properties (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    user_id INTEGER NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id, name)
) WITHOUT ROWID;

-- migration: v10-entity-table

-- The console's entity table filtered by assignee reads that member's entities of the list in label order
-- from an index of their own (the table's other pages read entities_by_label).
CREATE INDEX entities_by_assignee ON entities (project_id, list, assignee_id, label, id);

-- migration: v11-webhooks

-- Webhooks (docs/integrations.md, "Webhooks"). An endpoint per project: its URL, the events it wants (names
-- separated by spaces), the secret its deliveries are signed with (never shown again after creation) and
-- whether it is enabled.
CREATE TABLE webhook_endpoints (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL
);
CREATE INDEX webhook_endpoints_by_project ON webhook_endpoints (project_id);
-- The outbox and the delivery log in one: a row per event and endpoint that wants it, written in the
-- transaction of the change it reports. `event_id` is the event's stable id (the same for every endpoint and
-- every attempt), `subject` the record or entity it is about (deliveries of one endpoint and subject leave
-- in id order, each only once the one before it was delivered), `payload` the body sent byte for byte.
-- A claim holds a row until `claimed_until`; a failed attempt sets `next_attempt_at` with backoff.
CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY,
    endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id),
    project_id INTEGER NOT NULL REFERENCES projects (id),
    event_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL,
    claimed_until REAL,
    last_status INTEGER,
    last_error TEXT,
    response_ms INTEGER,
    delivered_at REAL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_subject ON webhook_deliveries (endpoint_id, subject, id);
CREATE INDEX webhook_deliveries_by_project ON webhook_deliveries (project_id, endpoint_id, id);

-- migration: v12-audit

-- The audit log (docs/audit-log.md): one row per administrative act, appended and never changed. `actor` is
-- the user's name as it was (or as typed, for a failed sign-in), `actor_id` the user when known; `address`
-- the client's address (the command line's acts have none); `project_id` the project acted in, when any;
-- `action` what was done (AuditAction), `subject` what it was done to, `detail` a JSON object with the rest.
-- The triggers make the table append-only for every connection, the product's own included.
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    actor_id INTEGER,
    actor TEXT NOT NULL,
    address TEXT,
    project_id INTEGER,
    action TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_by_project ON audit_log (project_id, id);
CREATE INDEX audit_log_by_action ON audit_log (action, id);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- migration: v13-devices

-- People and devices (README, "People, devices and login codes"). A server admin creates projects from the
-- console (`user add --server-admin`). Every access token belongs to one device row: who it is, the project it
-- was enrolled for, its name, and what it last reported (its client id and version, first and last sync, how
-- many changes it had waiting to send). A device is revoked by revoking its token (`tokens.revoked_at`): there
-- is no second flag. Tokens issued before this migration each get a device row named "access token".
ALTER TABLE users ADD COLUMN server_admin INTEGER NOT NULL DEFAULT 0;
CREATE TABLE devices (
    id INTEGER PRIMARY KEY,
    token_id INTEGER NOT NULL UNIQUE REFERENCES tokens (id),
    user_id INTEGER NOT NULL REFERENCES users (id),
    project_id INTEGER REFERENCES projects (id),
    name TEXT NOT NULL,
    client_id TEXT,
    client_version TEXT,
    first_sync_at REAL,
    last_sync_at REAL,
    waiting INTEGER,
    created_at REAL NOT NULL
);
CREATE INDEX devices_by_user ON devices (user_id, id);
INSERT INTO devices (token_id, user_id, name, created_at) SELECT id, user_id, 'access token', created_at FROM tokens;
-- One-time login codes: only the SHA-256 of the code (normalised: upper case, no separators), the member and
-- project it enrols a device for, who created it (NULL: the command line), when it expires, and when it was
-- used and by which device (a code is used once).
CREATE TABLE login_codes (
    id INTEGER PRIMARY KEY,
    code_hash BLOB NOT NULL UNIQUE,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    user_id INTEGER NOT NULL REFERENCES users (id),
    created_by INTEGER REFERENCES users (id),
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL,
    device_id INTEGER REFERENCES devices (id)
);
CREATE INDEX login_codes_by_user ON login_codes (project_id, user_id, id);

-- migration: v14-form-states

-- Forms run from the console. A form closed to new records (pushes that would create a record of it are
-- refused; records already stored still take edits) has a row here with `closed` 1; reopening it sets 0.
-- Who changed it last and when. A form without a row is open.
CREATE TABLE form_states (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    form_id TEXT NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,
    changed_by INTEGER REFERENCES users (id),
    changed_at REAL NOT NULL,
    PRIMARY KEY (project_id, form_id)
);
-- A form uploaded in the console and checked, waiting to be published: its definition as JSON text (a
-- workbook's, converted), the file's name, who uploaded it and when. Publishing reads it from here.
CREATE TABLE form_uploads (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    file_name TEXT NOT NULL,
    definition TEXT NOT NULL,
    uploaded_by INTEGER NOT NULL REFERENCES users (id),
    uploaded_at REAL NOT NULL
);
CREATE INDEX form_uploads_by_project ON form_uploads (project_id, id);

-- migration: v15-project-keys
-- Project keys for sensitive fields (docs/sensitive-fields.md): only the public half of each X25519 key pair,
-- with its id; the private half is written to the admin's key file and never stored here. The newest key of a
-- project is its current one, which devices seal new sensitive answers to; older keys stay, because answers
-- sealed to them keep naming their id.
CREATE TABLE project_keys (
    project_id INTEGER NOT NULL REFERENCES projects (id),
    key_id TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (project_id, key_id)
);

-- migration: v16-signed-submissions
-- Signed submissions (docs/signed-submissions.md). Each device's Ed25519 public key (base64 of its 32 raw
-- bytes), kept with its token from the login code's exchange or the device's first registration, and when.
ALTER TABLE devices ADD COLUMN public_key TEXT;
ALTER TABLE devices ADD COLUMN key_registered_at REAL;
-- Each history entry keeps the device row whose token made the change, the device's signature of the
-- mutation (base64) with the mutation's canonical bytes it signed, and its link in the record's hash chain:
-- hash = SHA-256(previous entry's hash ‖ the entry's canonical content), hex (HistoryChain).
ALTER TABLE record_history ADD COLUMN device_id INTEGER REFERENCES devices (id);
ALTER TABLE record_history ADD COLUMN signature TEXT;
ALTER TABLE record_history ADD COLUMN signed_mutation TEXT;
ALTER TABLE record_history ADD COLUMN hash TEXT;
-- Entries written before this migration have no hash; every entry from `first_chained_id` on must have one.
CREATE TABLE history_chain (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    first_chained_id INTEGER NOT NULL
);
INSERT INTO history_chain (id, first_chained_id) SELECT 1, coalesce(max(id), 0) + 1 FROM record_history;

-- migration: v17-entity-label-search
-- A search index of the entity labels for the console's entity table (docs/entity-lists.md): the trigrams of
-- each label (FTS5's trigram tokenizer, ignoring case), so that a search for text of three characters or more
-- that few labels contain reads those entities, not the whole label index. FTS5 needs an integer key and
-- `entities` has none (WITHOUT ROWID), so each entity's key, list and label are kept in `entity_labels`, the
-- index's content, by the triggers below in the statement that writes the entity; a label changed to itself
-- leaves the index alone.
CREATE TABLE entity_labels (
    key INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL,
    list TEXT NOT NULL,
    id TEXT NOT NULL,
    label TEXT NOT NULL
);
CREATE UNIQUE INDEX entity_labels_by_entity ON entity_labels (project_id, id);
CREATE VIRTUAL TABLE entity_label_search USING fts5(label, content = 'entity_labels', content_rowid = 'key', tokenize = 'trigram');
INSERT INTO entity_labels (project_id, list, id, label) SELECT project_id, list, id, label FROM entities;
INSERT INTO entity_label_search (entity_label_search) VALUES ('rebuild');
CREATE TRIGGER entities_label_search_insert AFTER INSERT ON entities BEGIN INSERT INTO entity_labels (project_id, list, id, label) VALUES (new.project_id, new.list, new.id, new.label); INSERT INTO entity_label_search (rowid, label) VALUES (last_insert_rowid(), new.label); END;
CREATE TRIGGER entities_label_search_update AFTER UPDATE OF label ON entities WHEN old.label IS NOT new.label BEGIN INSERT INTO entity_label_search (entity_label_search, rowid, label) SELECT 'delete', key, label FROM entity_labels WHERE project_id = old.project_id AND id = old.id; UPDATE entity_labels SET label = new.label WHERE project_id = old.project_id AND id = old.id; INSERT INTO entity_label_search (rowid, label) SELECT key, label FROM entity_labels WHERE project_id = new.project_id AND id = new.id; END;
CREATE TRIGGER entities_label_search_delete AFTER DELETE ON entities BEGIN INSERT INTO entity_label_search (entity_label_search, rowid, label) SELECT 'delete', key, label FROM entity_labels WHERE project_id = old.project_id AND id = old.id; DELETE FROM entity_labels WHERE project_id = old.project_id AND id = old.id; END;

-- migration: v18-odata-count-index
-- The OData feed's count of a form's records filtered by review state and author (`$count=true` on the first
-- page of a walk, docs/integrations.md "Paging"): every column its statement reads after the form (review state,
-- author, state, shared), so the count reads this index alone — a covering index, sought to the review state
-- and each author — instead of each matching record's row.
CREATE INDEX records_by_form_review_author ON records (project_id, form_id, review_state, author_id, state, shared);

-- migration: v19-entity-properties
-- The console's entity table filtered by a property's value (docs/entity-lists.md) reads the entities that have
-- that value from an index of their own, in label order, as the assignee filter does, instead of testing every
-- entity of the list. A row per entity and property: the property's text as the filter compares it (the first
-- member of its value object, as text: `{"text":"D07"}` → `D07`, `{"integer":3}` → `3`; no row for a null), the
-- entity's label and id. The triggers below keep it in the statement that writes the entity, with the same
-- expression as the statement that fills it here; an update that changes neither list, label nor fields leaves it
-- alone.
CREATE TABLE entity_properties (
    project_id INTEGER NOT NULL,
    list TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    label TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (project_id, list, name, value, label, id)
) WITHOUT ROWID;
INSERT INTO entity_properties (project_id, list, name, value, label, id) SELECT * FROM (SELECT e.project_id, e.list, p.key, CASE WHEN p.type IN ('object', 'array') THEN (SELECT CAST(j.value AS TEXT) FROM json_each(p.value) j LIMIT 1) ELSE CAST(p.value AS TEXT) END AS value, e.label, e.id FROM entities e, json_each(e.fields, '$.values') p) WHERE value IS NOT NULL ORDER BY 1, 2, 3, 4, 5, 6;
CREATE TRIGGER entities_properties_insert AFTER INSERT ON entities BEGIN INSERT OR IGNORE INTO entity_properties (project_id, list, name, value, label, id) SELECT * FROM (SELECT new.project_id, new.list, p.key, CASE WHEN p.type IN ('object', 'array') THEN (SELECT CAST(j.value AS TEXT) FROM json_each(p.value) j LIMIT 1) ELSE CAST(p.value AS TEXT) END AS value, new.label, new.id FROM json_each(new.fields, '$.values') p) WHERE value IS NOT NULL; END;
CREATE TRIGGER entities_properties_update AFTER UPDATE OF list, label, fields ON entities WHEN old.list IS NOT new.list OR old.label IS NOT new.label OR old.fields IS NOT new.fields BEGIN DELETE FROM entity_properties WHERE project_id = old.project_id AND list = old.list AND (name, value, label, id) IN (SELECT p.key, CASE WHEN p.type IN ('object', 'array') THEN (SELECT CAST(j.value AS TEXT) FROM json_each(p.value) j LIMIT 1) ELSE CAST(p.value AS TEXT) END, old.label, old.id FROM json_each(old.fields, '$.values') p); INSERT OR IGNORE INTO entity_properties (project_id, list, name, value, label, id) SELECT * FROM (SELECT new.project_id, new.list, p.key, CASE WHEN p.type IN ('object', 'array') THEN (SELECT CAST(j.value AS TEXT) FROM json_each(p.value) j LIMIT 1) ELSE CAST(p.value AS TEXT) END AS value, new.label, new.id FROM json_each(new.fields, '$.values') p) WHERE value IS NOT NULL; END;
CREATE TRIGGER entities_properties_delete AFTER DELETE ON entities BEGIN DELETE FROM entity_properties WHERE project_id = old.project_id AND list = old.list AND (name, value, label, id) IN (SELECT p.key, CASE WHEN p.type IN ('object', 'array') THEN (SELECT CAST(j.value AS TEXT) FROM json_each(p.value) j LIMIT 1) ELSE CAST(p.value AS TEXT) END, old.label, old.id FROM json_each(old.fields, '$.values') p); END;

-- migration: v20-entity-label-rest-search
-- The trigrams of each entity label without its first character, for the console's entity table
-- (docs/entity-lists.md): a search that many labels hold is the labels that start with its text (ranges of
-- entities_by_label) and those that hold it further in, which this index counts and finds, so that a text many
-- labels start with (`Household 05`) need not walk the labels before the first of them. Its content is
-- `entity_labels` through the view below; the triggers keep it in the statement that writes `entity_labels`.
CREATE VIEW entity_label_rests AS SELECT key, substr(label, 2) AS rest FROM entity_labels;
CREATE VIRTUAL TABLE entity_label_rest_search USING fts5(rest, content = 'entity_label_rests', content_rowid = 'key', tokenize = 'trigram');
INSERT INTO entity_label_rest_search (entity_label_rest_search) VALUES ('rebuild');
CREATE TRIGGER entity_labels_rest_insert AFTER INSERT ON entity_labels BEGIN INSERT INTO entity_label_rest_search (rowid, rest) VALUES (new.key, substr(new.label, 2)); END;
CREATE TRIGGER entity_labels_rest_update AFTER UPDATE OF label ON entity_labels BEGIN INSERT INTO entity_label_rest_search (entity_label_rest_search, rowid, rest) VALUES ('delete', old.key, substr(old.label, 2)); INSERT INTO entity_label_rest_search (rowid, rest) VALUES (new.key, substr(new.label, 2)); END;
CREATE TRIGGER entity_labels_rest_delete AFTER DELETE ON entity_labels BEGIN INSERT INTO entity_label_rest_search (entity_label_rest_search, rowid, rest) VALUES ('delete', old.key, substr(old.label, 2)); END;

-- migration: v21-push-manifests
-- One signature per push (docs/signed-submissions.md): a device signs each push once, over its manifest — the
-- SHA-256 of each pushed mutation's canonical bytes, in order, 32 bytes each, concatenated in `digests`. The
-- manifest is kept once per push, with the device row whose token pushed it and the signature (base64); each
-- history entry the push wrote references it and names its mutation's index in it, and keeps the mutation's
-- bytes in `signed_mutation` as before, so `records verify` checks the manifest's signature once and each
-- entry's mutation against its digest. The entries' hash chain (rule 4) covers the reference.
CREATE TABLE push_manifests (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id),
    device_id INTEGER REFERENCES devices (id),
    signature TEXT NOT NULL,
    digests BLOB NOT NULL,
    created_at REAL NOT NULL
);
ALTER TABLE record_history ADD COLUMN manifest_id INTEGER REFERENCES push_manifests (id);
ALTER TABLE record_history ADD COLUMN manifest_index INTEGER;

-- migration: v22-odata-filtered-page-index
-- The OData feed's page of a form's records filtered by review state and author (docs/integrations.md,
-- "Paging"): `records_by_form_review_author` gains the record id after the author, so that such a page is a range of
-- this index in the page's own order (id, after the previous page's last) and reads only the rows it returns,
-- instead of walking `records_by_form` and reading every record of the form to test it. It still holds every
-- column the count's statement reads (state and shared after the id), so the count stays a covering-index search.
DROP INDEX records_by_form_review_author;
CREATE INDEX records_by_form_review_author ON records (project_id, form_id, review_state, author_id, id, state, shared);
