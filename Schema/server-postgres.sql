-- The server's database on PostgreSQL (several fieldsheet-server instances), as its migrations leave it.
-- Kept once: the build compiles this file into ServerPostgres (Plugins/SchemaConstants), whose migrations run
-- exactly these statements, in order. Migrations are append-only: a shipped one is never edited; a change is
-- a new migration appended below.
-- Format: a line "-- migration: ID" starts a migration (ID is the version recorded in `schema_migrations`); every statement
-- below it belongs to it. A statement ends with a ";" at the end of a line. Other lines that start with "--"
-- are comments. Where a migration also runs Swift code (converting rows), that code is registered under the
-- same ID and runs after the statements; a migration may be Swift code alone, with no statement here.

-- migration: 1

-- The same tables as the SQLite schema, in PostgreSQL types (identity keys, UUID, BYTEA, BOOLEAN).
CREATE TABLE projects (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    last_sequence BIGINT NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE users (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE memberships (
    user_id BIGINT NOT NULL REFERENCES users (id),
    project_id BIGINT NOT NULL REFERENCES projects (id),
    role TEXT NOT NULL CHECK (role IN ('collector', 'reviewer', 'admin')),
    PRIMARY KEY (user_id, project_id)
);
CREATE TABLE tokens (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id),
    token_hash BYTEA NOT NULL UNIQUE,
    created_at DOUBLE PRECISION NOT NULL,
    revoked_at DOUBLE PRECISION
);
CREATE TABLE forms (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    form_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    definition TEXT NOT NULL,
    digest TEXT NOT NULL,
    published_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, form_id, version)
);
CREATE TABLE records (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    id UUID NOT NULL,
    form_id TEXT NOT NULL,
    form_version INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('draft', 'submitted', 'deleted')),
    author_id BIGINT NOT NULL REFERENCES users (id),
    shared BOOLEAN NOT NULL,
    revision BIGINT NOT NULL,
    sequence BIGINT NOT NULL,
    fields TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE UNIQUE INDEX records_by_sequence ON records (project_id, sequence);
CREATE INDEX records_by_form ON records (project_id, form_id, id);
CREATE TABLE mutations (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    client_id TEXT NOT NULL,
    mutation_id TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id),
    digest BYTEA NOT NULL,
    outcome TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, client_id, mutation_id)
);
CREATE TABLE conflicts (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    record_id UUID NOT NULL,
    mutation_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    open BOOLEAN NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX conflicts_by_record ON conflicts (project_id, record_id);

-- migration: 2

-- Record fields move from the first version's shape (every field an object repeating its revision, clock and
-- device: {"f": {"value": …, "revision": 1, "hlc": …, "clientId": "…"}}) to the one record representation
-- (Schema/record-fields.schema.json), in PostgreSQL's JSON functions: every field keeps its own stamp, which
-- the next write of the record folds into the shared form. The schema does not change.
UPDATE records r SET fields = converted.fields
FROM (
    SELECT r2.project_id, r2.id, jsonb_build_object(
        'values', coalesce(jsonb_object_agg(e.key, e.value -> 'value') FILTER (WHERE e.key IS NOT NULL), '{}'::jsonb),
        'writers', coalesce(jsonb_agg(e.value -> 'clientId' ORDER BY e.key) FILTER (WHERE e.key IS NOT NULL), '[]'::jsonb),
        'stamps', coalesce(jsonb_object_agg(e.key, jsonb_build_object(
            'revision', e.value -> 'revision', 'clock', e.value -> 'hlc', 'writer', e.ordinal - 1)) FILTER (WHERE e.key IS NOT NULL), '{}'::jsonb)
    )::text AS fields
    FROM records r2
    LEFT JOIN LATERAL (
        SELECT key, value, row_number() OVER (ORDER BY key) AS ordinal FROM jsonb_each(r2.fields::jsonb)
    ) e ON true
    GROUP BY r2.project_id, r2.id
) converted
WHERE r.project_id = converted.project_id AND r.id = converted.id;

-- migration: 3

-- The office side (as the SQLite schema's v3-review-history): review state and comment, the record's times
-- and first device, resolutions in the conflict log, and every applied change in record_history.
ALTER TABLE records ADD COLUMN review_state TEXT CHECK (review_state IN ('received', 'hasIssues', 'approved', 'rejected', 'edited'));
ALTER TABLE records ADD COLUMN review_comment TEXT;
ALTER TABLE records ADD COLUMN created_at DOUBLE PRECISION;
ALTER TABLE records ADD COLUMN submitted_at DOUBLE PRECISION;
ALTER TABLE records ADD COLUMN device TEXT;
UPDATE records SET created_at = updated_at;
UPDATE records SET review_state = 'received', submitted_at = updated_at WHERE shared;
ALTER TABLE conflicts ADD COLUMN resolved_at DOUBLE PRECISION;
ALTER TABLE conflicts ADD COLUMN resolved_by BIGINT REFERENCES users (id);
ALTER TABLE conflicts ADD COLUMN resolution TEXT CHECK (resolution IN ('server', 'client'));
CREATE INDEX conflicts_by_project ON conflicts (project_id, open, id);
CREATE TABLE record_history (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    record_id UUID NOT NULL,
    revision BIGINT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('change', 'review', 'resolution')),
    user_id BIGINT NOT NULL REFERENCES users (id),
    client_id TEXT,
    detail TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX record_history_by_record ON record_history (project_id, record_id, id);

-- migration: 4

-- The web console (as the SQLite schema's v4-console): keyset indexes for the submissions table and the
-- signed-in browsers' sessions.
CREATE INDEX records_by_form_updated ON records (project_id, form_id, updated_at, id);
CREATE INDEX records_by_form_created ON records (project_id, form_id, (coalesce(created_at, updated_at)), id);
CREATE INDEX records_by_form_review ON records (project_id, form_id, review_state, updated_at, id);
CREATE TABLE console_sessions (
    id_hash BYTEA PRIMARY KEY,
    token_id BIGINT NOT NULL REFERENCES tokens (id),
    csrf TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

-- migration: 5

-- Media attachments (as the SQLite schema's v5-attachments: which are stored and verified, which records
-- reference which hash). Several instances share no disk, so the bytes live here too: an upload in progress
-- in attachment_uploads, its bytes in attachment_chunks (about a megabyte each, in order of `start`); any
-- instance continues an upload another one began. Once verified, `complete` is set and the row in
-- `attachments` follows.
CREATE TABLE attachments (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    stored_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, sha256)
);
CREATE TABLE attachment_refs (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    record_id UUID NOT NULL,
    field_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (project_id, record_id, field_id)
);
CREATE INDEX attachment_refs_by_hash ON attachment_refs (project_id, sha256);
CREATE TABLE attachment_uploads (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    total BIGINT NOT NULL,
    received BIGINT NOT NULL,
    complete BOOLEAN NOT NULL,
    PRIMARY KEY (project_id, sha256)
);
CREATE TABLE attachment_chunks (
    project_id BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    start BIGINT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (project_id, sha256, start),
    FOREIGN KEY (project_id, sha256) REFERENCES attachment_uploads (project_id, sha256) ON DELETE CASCADE
);
-- Photos and audio arrive compressed: store the chunks out of line without trying to compress them again.
ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- migration: 6

-- Garbage collection of attachments (as the SQLite schema's v6-attachment-collection): the attachments
-- conflict-log entries keep, existing entries indexed here; when a sweep first found an attachment
-- unreferenced. Uploads note when a byte was last appended (an abandoned one goes after a grace period;
-- those in progress now count from the upgrade) and until when a download reads them (a sweep leaves
-- an attachment alone while a download holds this lease).
CREATE TABLE conflict_attachment_refs (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    record_id UUID NOT NULL,
    PRIMARY KEY (project_id, sha256, record_id)
);
INSERT INTO conflict_attachment_refs (project_id, sha256, record_id)
SELECT DISTINCT project_id, side.sha256, record_id FROM conflicts,
    LATERAL (VALUES (entry::jsonb #>> '{server,value,attachment,sha256}'), (entry::jsonb #>> '{client,value,attachment,sha256}')) AS side (sha256)
WHERE side.sha256 IS NOT NULL;
CREATE TABLE attachment_unreferenced (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    since DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, sha256)
);
ALTER TABLE attachment_uploads ADD COLUMN updated_at DOUBLE PRECISION NOT NULL DEFAULT 0;
UPDATE attachment_uploads SET updated_at = extract(epoch FROM now());
ALTER TABLE attachment_uploads ADD COLUMN read_until DOUBLE PRECISION NOT NULL DEFAULT 0;

-- migration: 7

-- Attachments between members (as the SQLite schema's v7-attachment-holders: holders, who put each
-- reference, who stored each attachment and its media type). Each member's upload of a hash is its own row
-- (`uploader_id`, the user; another member's upload of the same hash never moves or discards it); the
-- stored attachment is the row with `uploader_id` 0, which a verified upload becomes. Uploads in progress
-- before this migration start again from byte 0 (the devices hold the files).
DELETE FROM attachment_uploads WHERE NOT complete;
ALTER TABLE attachment_chunks DROP CONSTRAINT attachment_chunks_project_id_sha256_fkey;
ALTER TABLE attachment_uploads ADD COLUMN uploader_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE attachment_chunks ADD COLUMN uploader_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE attachment_uploads DROP CONSTRAINT attachment_uploads_pkey;
ALTER TABLE attachment_uploads ADD PRIMARY KEY (project_id, sha256, uploader_id);
ALTER TABLE attachment_chunks DROP CONSTRAINT attachment_chunks_pkey;
ALTER TABLE attachment_chunks ADD PRIMARY KEY (project_id, sha256, uploader_id, start);
ALTER TABLE attachment_chunks ADD FOREIGN KEY (project_id, sha256, uploader_id)
    REFERENCES attachment_uploads (project_id, sha256, uploader_id) ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE attachment_refs ADD COLUMN added_by BIGINT NOT NULL DEFAULT 0;
UPDATE attachment_refs a SET added_by = r.author_id FROM records r WHERE r.project_id = a.project_id AND r.id = a.record_id;
ALTER TABLE attachments ADD COLUMN stored_by BIGINT;
ALTER TABLE attachments ADD COLUMN media_type TEXT;
CREATE TABLE attachment_holders (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    sha256 TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id),
    PRIMARY KEY (project_id, sha256, user_id)
);
INSERT INTO attachment_holders (project_id, sha256, user_id)
SELECT DISTINCT a.project_id, a.sha256, r.author_id FROM attachment_refs a
JOIN attachments s ON s.project_id = a.project_id AND s.sha256 = a.sha256
JOIN records r ON r.project_id = a.project_id AND r.id = a.record_id
ON CONFLICT DO NOTHING;

-- migration: 8

-- A record's times are its author's, the server's arrival is `received_at`; a conflict entry reaches the
-- device whose value lost at its next pull (as the SQLite schema's v8-record-times).
ALTER TABLE records ADD COLUMN received_at DOUBLE PRECISION;
UPDATE records SET received_at = updated_at;
ALTER TABLE conflicts ADD COLUMN sequence BIGINT;
ALTER TABLE conflicts ADD COLUMN loser TEXT;
CREATE INDEX conflicts_by_loser ON conflicts (project_id, loser, sequence) WHERE loser IS NOT NULL;

-- migration: 9

-- Entity lists, entities, their history and conflict log, and members' properties (as the SQLite schema's
-- v9-entities).
CREATE TABLE entity_lists (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    name TEXT NOT NULL,
    properties TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT 'all',
    last_sequence BIGINT NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, name)
);
CREATE TABLE entities (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    id UUID NOT NULL,
    list TEXT NOT NULL,
    revision BIGINT NOT NULL,
    sequence BIGINT NOT NULL,
    creator_id BIGINT NOT NULL REFERENCES users (id),
    assignee_id BIGINT REFERENCES users (id),
    deleted BOOLEAN NOT NULL DEFAULT false,
    label TEXT NOT NULL,
    fields TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, list) REFERENCES entity_lists (project_id, name)
);
CREATE UNIQUE INDEX entities_by_sequence ON entities (project_id, list, sequence);
CREATE INDEX entities_by_label ON entities (project_id, list, label COLLATE "C", id);
CREATE TABLE entity_history (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    entity_id UUID NOT NULL,
    revision BIGINT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('create', 'update', 'import', 'assign', 'delete')),
    record_id UUID,
    user_id BIGINT NOT NULL REFERENCES users (id),
    client_id TEXT,
    detail TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX entity_history_by_entity ON entity_history (project_id, entity_id, id);
CREATE TABLE entity_conflicts (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    entity_id UUID NOT NULL,
    record_id UUID NOT NULL,
    mutation_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX entity_conflicts_by_entity ON entity_conflicts (project_id, entity_id, id);
CREATE TABLE user_properties (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    user_id BIGINT NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id, name)
);

-- migration: 10

-- The console's entity table filtered by assignee (as the SQLite schema's v10-entity-table).
CREATE INDEX entities_by_assignee ON entities (project_id, list, assignee_id, label COLLATE "C", id);

-- migration: 11

-- Webhook endpoints and their outbox of deliveries (as the SQLite schema's v11-webhooks). Several instances
-- claim due deliveries with FOR UPDATE SKIP LOCKED and hold each until `claimed_until`, so each is sent by one.
CREATE TABLE webhook_endpoints (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    enabled BOOLEAN NOT NULL DEFAULT true,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX webhook_endpoints_by_project ON webhook_endpoints (project_id);
CREATE TABLE webhook_deliveries (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints (id),
    project_id BIGINT NOT NULL REFERENCES projects (id),
    event_id UUID NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at DOUBLE PRECISION NOT NULL,
    claimed_until DOUBLE PRECISION,
    last_status INTEGER,
    last_error TEXT,
    response_ms INTEGER,
    delivered_at DOUBLE PRECISION
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_subject ON webhook_deliveries (endpoint_id, subject, id);
CREATE INDEX webhook_deliveries_by_project ON webhook_deliveries (project_id, endpoint_id, id);

-- migration: 12

-- The audit log (as the SQLite schema's v12-audit): appended, never changed; a trigger refuses UPDATE,
-- DELETE and TRUNCATE for every role.
CREATE TABLE audit_log (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL,
    actor_id BIGINT,
    actor TEXT NOT NULL,
    address TEXT,
    project_id BIGINT,
    action TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_by_project ON audit_log (project_id, id);
CREATE INDEX audit_log_by_action ON audit_log (action, id);
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION ''the audit log is append-only''; END';
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- migration: 13

-- People, devices and login codes (as the SQLite schema's v13-devices).
ALTER TABLE users ADD COLUMN server_admin BOOLEAN NOT NULL DEFAULT false;
CREATE TABLE devices (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_id BIGINT NOT NULL UNIQUE REFERENCES tokens (id),
    user_id BIGINT NOT NULL REFERENCES users (id),
    project_id BIGINT REFERENCES projects (id),
    name TEXT NOT NULL,
    client_id TEXT,
    client_version TEXT,
    first_sync_at DOUBLE PRECISION,
    last_sync_at DOUBLE PRECISION,
    waiting INTEGER,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX devices_by_user ON devices (user_id, id);
INSERT INTO devices (token_id, user_id, name, created_at) SELECT id, user_id, 'access token', created_at FROM tokens;
CREATE TABLE login_codes (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code_hash BYTEA NOT NULL UNIQUE,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    user_id BIGINT NOT NULL REFERENCES users (id),
    created_by BIGINT REFERENCES users (id),
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    used_at DOUBLE PRECISION,
    device_id BIGINT REFERENCES devices (id)
);
CREATE INDEX login_codes_by_user ON login_codes (project_id, user_id, id);

-- migration: 14

-- Forms run from the console: which forms are closed to new records, and uploads waiting to be published
-- (as the SQLite schema's v14-form-states).
CREATE TABLE form_states (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    form_id TEXT NOT NULL,
    closed BOOLEAN NOT NULL DEFAULT false,
    changed_by BIGINT REFERENCES users (id),
    changed_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, form_id)
);
CREATE TABLE form_uploads (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    file_name TEXT NOT NULL,
    definition TEXT NOT NULL,
    uploaded_by BIGINT NOT NULL REFERENCES users (id),
    uploaded_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX form_uploads_by_project ON form_uploads (project_id, id);

-- migration: 15
-- Project keys for sensitive fields: the public half of each X25519 key pair only (see server-sqlite.sql).
CREATE TABLE project_keys (
    project_id BIGINT NOT NULL REFERENCES projects (id),
    key_id TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project_id, key_id)
);

-- migration: 16
-- Signed submissions (as the SQLite schema's v16-signed-submissions): each device's public key with its
-- token, and each history entry's device, signature, signed mutation and hash-chain link.
ALTER TABLE devices ADD COLUMN public_key TEXT;
ALTER TABLE devices ADD COLUMN key_registered_at DOUBLE PRECISION;
ALTER TABLE record_history ADD COLUMN device_id BIGINT REFERENCES devices (id);
ALTER TABLE record_history ADD COLUMN signature TEXT;
ALTER TABLE record_history ADD COLUMN signed_mutation TEXT;
ALTER TABLE record_history ADD COLUMN hash TEXT;
CREATE TABLE history_chain (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    first_chained_id BIGINT NOT NULL
);
INSERT INTO history_chain (id, first_chained_id) SELECT 1, coalesce(max(id), 0) + 1 FROM record_history;

-- migration: 17
-- A trigram index of the entity labels for the console's entity table (as the SQLite schema's
-- v17-entity-label-search): `label ILIKE '%text%'` reads the few entities whose label may contain a rare text
-- from it instead of walking entities_by_label. pg_trgm is a trusted extension, which the database's owner may
-- create; where it cannot be created (a role without CREATE on the database, or the extension not installed)
-- the migration goes on without the index, with a warning, and the search walks the label index as before
-- (PostgresStorage.migrate() says so in the server's log).
DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm; EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN RAISE WARNING 'pg_trgm cannot be created (%): the console''s entity search walks the label index', SQLERRM; END $$;
DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN CREATE INDEX entities_label_trigrams ON entities USING gin (label gin_trgm_ops); END IF; END $$;

-- migration: 18
-- The OData feed's count by review state and author (as the SQLite schema's v18-odata-count-index): an index
-- holding every column the count's statement reads, so the count is an index-only scan.
CREATE INDEX records_by_form_review_author ON records (project_id, form_id, review_state, author_id, state, shared);

-- migration: 19
-- The console's entity table filtered by a property's value reads the entities that have that value from an
-- index of their own, in label order (as the SQLite schema's v19-entity-properties): a row per entity and
-- property, its text as the filter compares it (the first member of its value object, as jsonb_each_text gives it;
-- no row for a null or a value that is not an object), the entity's label and id, kept by the trigger below in
-- the statement that writes the entity. `entity_property_values` is that text, written once. The index holds
-- md5(value), not the value, so that a long value (a note) cannot outgrow an index entry; the filter compares
-- both.
CREATE FUNCTION entity_property_values(fields TEXT) RETURNS TABLE (name TEXT, value TEXT) LANGUAGE sql IMMUTABLE AS $$ SELECT * FROM (SELECT p.key, (SELECT j.value FROM jsonb_each_text(p.value) j LIMIT 1) FROM jsonb_each(fields::jsonb -> 'values') p WHERE jsonb_typeof(p.value) = 'object') v (name, value) WHERE v.value IS NOT NULL $$;
CREATE TABLE entity_properties (
    project_id BIGINT NOT NULL,
    list TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    label TEXT COLLATE "C" NOT NULL,
    id UUID NOT NULL
);
INSERT INTO entity_properties (project_id, list, name, value, label, id) SELECT e.project_id, e.list, v.name, v.value, e.label, e.id FROM entities e, entity_property_values(e.fields) v;
CREATE INDEX entity_properties_by_value ON entity_properties (project_id, list, name, md5(value), label, id);
CREATE FUNCTION entity_properties_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP IN ('UPDATE', 'DELETE') THEN DELETE FROM entity_properties t USING entity_property_values(OLD.fields) v WHERE t.project_id = OLD.project_id AND t.list = OLD.list AND t.name = v.name AND md5(t.value) = md5(v.value) AND t.label = OLD.label AND t.id = OLD.id; END IF; IF TG_OP IN ('INSERT', 'UPDATE') THEN INSERT INTO entity_properties (project_id, list, name, value, label, id) SELECT NEW.project_id, NEW.list, v.name, v.value, NEW.label, NEW.id FROM entity_property_values(NEW.fields) v; END IF; RETURN NULL; END $$;
CREATE TRIGGER entities_properties_write AFTER INSERT OR DELETE ON entities FOR EACH ROW EXECUTE FUNCTION entity_properties_write();
CREATE TRIGGER entities_properties_update AFTER UPDATE OF list, label, fields ON entities FOR EACH ROW WHEN (OLD.list IS DISTINCT FROM NEW.list OR OLD.label IS DISTINCT FROM NEW.label OR OLD.fields IS DISTINCT FROM NEW.fields) EXECUTE FUNCTION entity_properties_write();

-- migration: 21
-- One signature per push (as the SQLite schema's v21-push-manifests): each push's manifest (the SHA-256 of each
-- pushed mutation's canonical bytes, concatenated) with its device and signature, kept once; each history entry
-- the push wrote references it with its mutation's index.
CREATE TABLE push_manifests (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id BIGINT NOT NULL REFERENCES projects (id),
    device_id BIGINT REFERENCES devices (id),
    signature TEXT NOT NULL,
    digests BYTEA NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
);
ALTER TABLE record_history ADD COLUMN manifest_id BIGINT REFERENCES push_manifests (id);
ALTER TABLE record_history ADD COLUMN manifest_index BIGINT;

-- migration: 22
-- The console's entity search by one rule on both backends (docs/entity-lists.md, "The console"): a label holds
-- the text with its ASCII letters folded to lower case and every other character as it is, as SQLite's LIKE
-- folds them (ILIKE folded by the database's locale, so the two backends differed, and no range of the label
-- index was exact for it). `lower(label COLLATE "C")` folds ASCII letters only. The trigram index of the labels
-- is rebuilt over that expression, and a second one indexes each label without its first character (as the
-- SQLite schema's v20-entity-label-rest-search), so that a search many labels start with reads those as ranges of
-- entities_by_label and the few that hold it further in from entities_label_rest_trigrams. Without pg_trgm
-- (migration 17) neither index is made and the search walks the label index.
DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN DROP INDEX IF EXISTS entities_label_trigrams; CREATE INDEX entities_label_trigrams ON entities USING gin (lower(label COLLATE "C") gin_trgm_ops); CREATE INDEX entities_label_rest_trigrams ON entities USING gin (lower(substr(label, 2) COLLATE "C") gin_trgm_ops); END IF; END $$;

-- migration: 23
-- The OData feed's page filtered by review state and author (as the SQLite schema's v22-odata-filtered-page-index):
-- the record id after the author, so that the page is a range of this index in its own order and reads only the
-- rows it returns; state and shared after it keep the count an index-only scan.
DROP INDEX records_by_form_review_author;
CREATE INDEX records_by_form_review_author ON records (project_id, form_id, review_state, author_id, id, state, shared);
