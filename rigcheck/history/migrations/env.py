"""alembic's environment for the history store: run by rigcheck.history.store on the connection
it opened (config.attributes["connection"]), never from an alembic.ini."""

from alembic import context

from rigcheck.history.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
