// Generated from Schema/server-postgres.sql; a test keeps them equal. Migrations never change once shipped.

/// The SQL of each PostgreSQL schema migration, in order (``PostgresStorage/migrate()`` runs them).
enum PostgresSchema {
    /// v1: the same tables as SQLite v1, in PostgreSQL types (identity keys, UUID, BYTEA, BOOLEAN).
    static let v1 = #"""
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
    """#

    /// Every migration: version and SQL. A database records the versions it applied in `schema_migrations`.
    static let migrations: [(version: Int, sql: String)] = [(1, v1), (2, RecordFieldsMigration.postgres)]
}
