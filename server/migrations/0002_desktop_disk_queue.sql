-- The hypervisor engine keeps the desktop's own disk (qcow2 overlay) and its start-queue position.
ALTER TABLE desktops ADD COLUMN disk_path text;
ALTER TABLE desktops ADD COLUMN queue jsonb;
