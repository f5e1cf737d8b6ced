"""A job's life: intake of an upload, the split, solving chunks, the recovery sweep, and the service
layer the web app, the CLI and the tasks call (commands in ``service``, reads in ``queries``)."""
