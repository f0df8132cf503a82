-- The roles the postgres image's bootstrap superuser (POSTGRES_USER postgres) makes on a new
-- volume, connected to POSTGRES_DB suitegen, before the setup (10-setup.sql, the ConfigMap
-- suitegen-db-setup of the base): the application role suitegen, no superuser, owning the
-- database, as CloudNativePG makes it in production. Its password comes from the environment
-- (SUITEGEN_DB_PASSWORD, the password of the ledger-app Secret), never from a file or an
-- argument. psql runs this file (\getenv, \gexec); TestBootstrapSQL runs it too.
\getenv app_password SUITEGEN_DB_PASSWORD
SELECT format('CREATE ROLE suitegen LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD %L', :'app_password') \gexec
ALTER DATABASE suitegen OWNER TO suitegen;
