"""Reports: what a run leaves in reports/<run>/ — junit.xml, certificate.json, report.html.

The pytest side is `rigcheck.plugin.reports` (options and hooks, light to import); the
certificate, its HTML page and `rigcheck diff` are plain functions of a certificate dict.
"""
