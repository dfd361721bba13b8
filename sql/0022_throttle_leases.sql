-- A process takes a slice of a bucket at once (a lease) and serves it locally: what the last take was granted,
-- since an update's RETURNING shows only the new row. A one-token take is granted 1 or 0, as `allowed` says.
ALTER TABLE throttle_buckets ADD COLUMN granted double precision NOT NULL DEFAULT 0;
