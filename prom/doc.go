// Package prom serves a running job's figures to Prometheus: /metrics in
// Prometheus's text format, made with client_golang, and /metrics.json,
// the same figures as the JSON of weir.JobStats.
//
// It is a package of its own so that a program using the in-memory API
// links client_golang only if it chooses to: the weir command does, with
// --metrics ADDR.
//
// Every scrape reads Job.Stats once and turns it into constant metrics
// (a prometheus.Collector over a private registry, not the global one);
// the package keeps no state between scrapes and starts no goroutines:
// serving the handler is the caller's business.
//
// Names follow Prometheus's conventions: the prefix weir_, counters end
// in _total, times are in seconds (_seconds) and sizes in bytes
// (_bytes). Every series has the labels job (the job's name) and process
// (the process whose figures it is); an operator instance's series add
// operator and instance, a peer's add peer, a key group's add key_group.
//
// Scope: /metrics holds this process's own figures only, so that a
// Prometheus scraping every process of a job counts each figure once and
// sums over the processes (sum by (job) (...)) to get the job's.
// /metrics?scope=job holds every process's figures as this process last
// heard them from the summaries the processes exchange at epoch ends,
// each under its own process label: scraping any one process that way
// shows the whole job, a few epochs behind for the peers. A setup that
// scrapes every process should use the default scope; one that scrapes a
// single process should ask for scope=job. /metrics.json is always the
// whole job as this process sees it.
package prom
