-- Runs once, when the postgres container initialises an empty data volume
-- (/docker-entrypoint-initdb.d). Tables are created by each service's own migrations at start.

-- Event timestamps and cron schedules are reasoned about in UTC.
ALTER DATABASE weft SET timezone TO 'UTC';

-- A stuck transaction would hold back the event store's global position for every subscriber.
ALTER DATABASE weft SET idle_in_transaction_session_timeout TO '60s';
