package postgres

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// statements are the quoted names and the SQL of one sink, made once its
// table is found (in schema nsp, named rel).
type statements struct {
	name  string         // the fence row's key
	table string         // the target, qualified and quoted
	stage pgx.Identifier // the staging table
	batch pgx.Identifier // the session's table for the path without checkpoints

	stageCols, batchCols []string // unquoted, for COPY

	createFence, createStage, createBatch string
	lockFence, readFence, setFence        string
	rewindFence                           string
	upsertStaged, deleteStaged, dropLater string
	upsertBatch                           string
	maxSeq                                string
}

// stageName is the staging table's name for sink name, within the 63
// bytes PostgreSQL keeps of a name.
func stageName(name string) string {
	const prefix, limit = "weir_stage_", 63
	if len(prefix)+len(name) <= limit {
		return prefix + name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	cut := limit - len(prefix) - len(suffix)
	for cut > 0 && !isRuneStart(name[cut]) {
		cut--
	}
	return prefix + name[:cut] + suffix
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func newStatements(cfg Config, nsp, rel string) statements {
	name := cfg.Name
	if name == "" {
		name = rel
	}
	q := statements{
		name:  name,
		table: pgx.Identifier{nsp, rel}.Sanitize(),
		stage: pgx.Identifier{nsp, stageName(name)},
		batch: pgx.Identifier{"pg_temp", "weir_batch"},
	}
	fence := pgx.Identifier{nsp, "weir_fence"}.Sanitize()
	stage := q.stage.Sanitize()
	cols := quoteAll(cfg.Columns)
	keys := quoteAll(cfg.Key)
	list, keyList := strings.Join(cols, ", "), strings.Join(keys, ", ")
	ckpt, seq := quote(ckptCol), quote(seqCol)

	q.stageCols = append([]string{ckptCol, seqCol}, cfg.Columns...)
	q.batchCols = append([]string{seqCol}, cfg.Columns...)

	q.createFence = "CREATE TABLE IF NOT EXISTS " + fence + " (sink text PRIMARY KEY, checkpoint bigint NOT NULL)"
	q.createStage = "CREATE TABLE IF NOT EXISTS " + stage + " AS SELECT 0::bigint AS " + ckpt + ", 0::bigint AS " + seq + ", " +
		list + " FROM " + q.table + " WITH NO DATA"
	q.createBatch = "CREATE TEMP TABLE IF NOT EXISTS " + quote(q.batch[1]) + " ON COMMIT DELETE ROWS AS SELECT 0::bigint AS " + seq + ", " +
		list + " FROM " + q.table + " WITH NO DATA"

	q.lockFence = "INSERT INTO " + fence + " (sink, checkpoint) VALUES ($1, 0) ON CONFLICT (sink) DO NOTHING"
	q.readFence = "SELECT checkpoint FROM " + fence + " WHERE sink = $1 FOR UPDATE"
	q.setFence = "UPDATE " + fence + " SET checkpoint = $2 WHERE sink = $1"
	q.rewindFence = "UPDATE " + fence + " SET checkpoint = $2 WHERE sink = $1 AND checkpoint > $2"

	conflict := " ON CONFLICT (" + keyList + ") DO "
	if rest := nonKey(cfg); len(rest) == 0 {
		conflict += "NOTHING"
	} else {
		sets := make([]string, len(rest))
		for i, c := range quoteAll(rest) {
			sets[i] = c + " = EXCLUDED." + c
		}
		conflict += "UPDATE SET " + strings.Join(sets, ", ")
	}
	upsert := func(from, where, order string) string {
		return "INSERT INTO " + q.table + " (" + list + ") SELECT DISTINCT ON (" + keyList + ") " + list +
			" FROM " + from + where + " ORDER BY " + keyList + ", " + order + conflict
	}
	q.upsertStaged = upsert(stage, " WHERE "+ckpt+" <= $1", ckpt+" DESC, "+seq+" DESC")
	q.upsertBatch = upsert(q.batch.Sanitize(), "", seq+" DESC")
	q.deleteStaged = "DELETE FROM " + stage + " WHERE " + ckpt + " <= $1"
	q.dropLater = "DELETE FROM " + stage + " WHERE " + ckpt + " > $1"
	q.maxSeq = "SELECT coalesce(max(" + seq + "), 0) FROM " + stage
	return q
}

// nonKey lists the columns that are not part of the key, in order.
func nonKey(cfg Config) []string {
	var rest []string
	for _, c := range cfg.Columns {
		isKey := false
		for _, k := range cfg.Key {
			isKey = isKey || k == c
		}
		if !isKey {
			rest = append(rest, c)
		}
	}
	return rest
}

func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quote(n)
	}
	return out
}

// tableIdent parses Config.Table: a name, or schema.name.
func tableIdent(table string) pgx.Identifier {
	if nsp, rel, ok := strings.Cut(table, "."); ok {
		return pgx.Identifier{nsp, rel}
	}
	return pgx.Identifier{table}
}
