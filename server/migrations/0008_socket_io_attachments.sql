-- Payloads of socket.io events too large for one NOTIFY (8,000 bytes): @socket.io/postgres-adapter stores them here and notifies their id; rows older than its cleanup interval are deleted by the adapter.
CREATE TABLE IF NOT EXISTS "socket_io_attachments" (
	"id" bigserial UNIQUE,
	"created_at" timestamptz DEFAULT now(),
	"payload" bytea
);
