package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// This file holds a job's past attempts: failScript appends each failed
// attempt's record to the job's field of {name}:tries (luaTried), the
// scripts that delete a job delete its field too (ack, cancel, dead's
// delete, drop), and Tries reads it.
//
//	{name}:tries  hash  id -> the records of its last MaxTries failed attempts,
//	                    oldest first, RS (0x1e) between them; a record is
//	                    attempt US worker US started µs US ended µs US outcome
//	                    ("r" retried, "d" died) US error (its first
//	                    MaxTryErr bytes), US being 0x1f
//
// A succeeded attempt leaves no record: its ack deletes the job. So the
// field costs Redis memory only while a job that failed waits for its
// retry or lies dead: at most MaxTries·(MaxTryErr + about 80) bytes.

// MaxTries is how many attempts a job's record keeps; MaxTryErr, how
// much of each error.
const (
	MaxTries  = 10
	MaxTryErr = 300
)

// Tries returns the key of the attempts' records.
func (k Keys) Tries() string { return k.Prefix + "tries" }

// luaTried appends an attempt's record to id's, keeping the last 10
// (MaxTries): the record's fields, the error cut to 300 bytes
// (MaxTryErr) and its separators made spaces.
const luaTried = `local function tried(id, a, worker, started, ended, outcome, err)
  local key = prefix .. 'tries'
  local list = {}
  local old = redis.call('HGET', key, id)
  if old then for r in string.gmatch(old, '[^\30]+') do list[#list + 1] = r end end
  err = string.gsub(string.sub(err, 1, 300), '[\30\31]', ' ')
  list[#list + 1] = table.concat({a, worker, started, ended, outcome, err}, '\31')
  while #list > 10 do table.remove(list, 1) end
  redis.call('HSET', key, id, table.concat(list, '\30'))
end
`

// A Try is one failed attempt as its record holds it.
type Try struct {
	Attempt int
	Worker  string
	Started int64 // µs on the server's clock, as its worker mapped it
	Ended   int64 // µs on the server's clock
	Died    bool  // the attempt was the last: the job died
	Err     string
}

// Tries returns the records of job id's last failed attempts, oldest
// first. It costs one round trip, O(MaxTries).
func (c *Client) Tries(ctx context.Context, k Keys, id string) ([]Try, error) {
	var v string
	err := c.Do(ctx, func(ctx context.Context, rdb redis.UniversalClient) (err error) {
		v, err = rdb.HGet(ctx, k.Tries(), id).Result()
		if err == redis.Nil {
			err = nil
		}
		return err
	})
	if err != nil || v == "" {
		return nil, err
	}
	var out []Try
	for _, rec := range strings.Split(v, "\x1e") {
		f := strings.SplitN(rec, "\x1f", 6)
		if len(f) != 6 {
			return nil, &ReplyError{"tries", "a record of " + strconv.Itoa(len(f)) + " fields"}
		}
		t := Try{Worker: f[1], Died: f[4] == "d", Err: f[5]}
		var e1, e2, e3 error
		t.Attempt, e1 = strconv.Atoi(f[0])
		t.Started, e2 = strconv.ParseInt(f[2], 10, 64)
		t.Ended, e3 = strconv.ParseInt(f[3], 10, 64)
		if e1 != nil || e2 != nil || e3 != nil {
			return nil, &ReplyError{"tries", "a record with a bad number: " + strconv.Quote(rec)}
		}
		out = append(out, t)
	}
	return out, nil
}
