-- The project's webhook log: the start of each receiver's answer on every attempt, test events
-- (deliveries that belong to no order), and the project-wide list, newest first.

ALTER TABLE webhook_attempts ADD COLUMN response_excerpt text;
ALTER TABLE webhook_deliveries ALTER COLUMN order_id DROP NOT NULL;
CREATE INDEX webhook_deliveries_project ON webhook_deliveries (project_id, created DESC, id);
-- A test event has no order, so the project is no longer checked through the order: check it here.
ALTER TABLE webhook_deliveries ADD FOREIGN KEY (project_id) REFERENCES projects (id);
