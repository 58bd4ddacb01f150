package gateway

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/registry"
)

// skillDirsTTL is how long a server's skill directories are kept when its
// listing gave no ttlMs.
const skillDirsTTL = 30 * time.Second

// skillDirsMax bounds the entries kept: beyond it, the expired ones go,
// and if that is not enough, all.
const skillDirsMax = 4096

// skillDirs keeps each skill server's skill directories (a skill's
// SKILL.md URI up to its last "/") from its latest skills listing, for as
// long as the listing's ttlMs says, so that a read of a URI no server
// lists does not list every skill server's skills again (skillFileOf). A
// listing of a per-user server, or one with cacheScope "private", is kept
// for the principal it was made for only. The zero value is empty.
type skillDirs struct {
	mu sync.Mutex
	m  map[string]skillDirsEntry
}

type skillDirsEntry struct {
	dirs    []string
	expires time.Time
}

// skillDirsKey is the key of server's listing for principal id ("": one
// public listing).
func skillDirsKey(server, id string) string { return server + "\x00" + id }

// get returns server's directories for the principal id, or for all; ok is
// false when none is kept (or it expired).
func (d *skillDirs) get(server, id string, now time.Time) (dirs []string, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range []string{skillDirsKey(server, id), skillDirsKey(server, "")} {
		if e, found := d.m[k]; found && now.Before(e.expires) {
			return e.dirs, true
		}
		if id == "" {
			break
		}
	}
	return nil, false
}

// put keeps the directories of skills, server's listing for principal id
// ("": public), for ttl (nil: skillDirsTTL; 0: not kept).
func (d *skillDirs) put(server, id string, skills []*registry.Skill, ttl *int, now time.Time) {
	life := skillDirsTTL
	if ttl != nil {
		life = time.Duration(*ttl) * time.Millisecond
	}
	key := skillDirsKey(server, id)
	d.mu.Lock()
	defer d.mu.Unlock()
	if life <= 0 {
		delete(d.m, key)
		return
	}
	if d.m == nil {
		d.m = map[string]skillDirsEntry{}
	}
	if len(d.m) >= skillDirsMax {
		for k, e := range d.m {
			if !now.Before(e.expires) {
				delete(d.m, k)
			}
		}
		if len(d.m) >= skillDirsMax {
			clear(d.m)
		}
	}
	d.m[key] = skillDirsEntry{dirs: skillDirsOf(skills), expires: now.Add(life)}
}

// skillDirsOf returns the directories of skills: each one's SKILL.md URI
// up to its last "/" (none for a URI without a path).
func skillDirsOf(skills []*registry.Skill) []string {
	var dirs []string
	for _, sk := range skills {
		if sk == nil {
			continue
		}
		i := strings.LastIndexByte(sk.URI, '/')
		if j := strings.Index(sk.URI, "://"); j < 0 || i < j+3 {
			continue // (no directory)
		}
		dirs = append(dirs, sk.URI[:i+1])
	}
	return dirs
}

// rememberSkills keeps server's listing of skills, made for the caller of
// ctx, with its ttl and cache scope (skillDirs).
func (g *Gateway) rememberSkills(ctx context.Context, server string, skills []*registry.Skill, ttl *int, scope string) {
	g.skillDirs.put(server, g.skillDirsPrincipal(ctx, server, scope), skills, ttl, time.Now())
}

// skillDirsPrincipal is the principal id under which a listing of server
// for the caller of ctx is kept: "" (all) unless the server is per-user or
// its listing private.
func (g *Gateway) skillDirsPrincipal(ctx context.Context, server, scope string) string {
	p := principalIn(ctx)
	if p == nil || scope != "private" && !g.h.Serving().PerUser(server) {
		return ""
	}
	return p.ID()
}

// serverSkillDirs returns server's skill directories for the caller of
// ctx: kept ones, or else those of a new listing (kept in turn; a list
// that fails counts as none).
func (g *Gateway) serverSkillDirs(ctx context.Context, server string) []string {
	id := ""
	if p := principalIn(ctx); p != nil {
		id = p.ID()
	}
	if dirs, ok := g.skillDirs.get(server, id, time.Now()); ok {
		return dirs
	}
	skills, ttl, scope, err := g.h.ListSkills(ctx, server)
	if err != nil {
		g.log.Debug("a server's skills could not be listed for a read", "server", server, "error", err)
		return nil
	}
	g.rememberSkills(ctx, server, skills, ttl, scope)
	return skillDirsOf(skills)
}
