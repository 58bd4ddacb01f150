package toolcatalog

import "strings"

// Query is a request phrased as a user (or a model acting for one) would,
// with the registry names of the tools that answer it: usually one; more
// where the catalogue really offers several right answers (a video
// meeting or a calendar event with a video call).
type Query struct {
	Text string
	Want []string
}

// q builds a Query; each want is SERVER/TOOL.
func q(text string, wants ...string) Query {
	out := Query{Text: text}
	for _, w := range wants {
		server, tool, _ := strings.Cut(w, "/")
		out.Want = append(out.Want, "mcp__"+server+"__"+tool)
	}
	return out
}

// Queries returns the catalogue's queries. They were written before the
// ranking was tuned, as a user would ask; some in the vocabulary of the
// request rather than of the tool ("meetings" for calendar events, "page
// the on-call engineer" for creating an incident), but many not: of the
// first 70, 24 contain every word of the right tool's name ("create a new
// bucket for backups" for create_bucket) and 29 more share at least one
// with it, which a lexical ranker finds easily. Only 17 share none; the 13
// added later share none either. Recall is reported on all the queries and
// on those that share no word with the name of a tool that answers them
// (after the ranker's own tokenization and stemming: toolsearch.SharedTerms).
func Queries() []Query { return append([]Query(nil), queries...) }

var queries = []Query{
	q("open a pull request for my branch", "forge/create_pull_request"),
	q("what meetings do I have tomorrow", "calendar/list_events", "meet/listMeetings"),
	q("send a message to the #general channel", "chat/post_message"),
	q("read the contents of /etc/hosts", "fs/read_file"),
	q("show me the slowest queries on the database", "postgres/get_slow_queries"),
	q("restart the web deployment in kubernetes", "k8s/rollout_restart"),
	q("why did the last CI build fail", "ci/get_job_log", "ci/get_pipeline", "ci/list_pipelines"),
	q("refund the customer's last payment", "payments/create_refund", "shop/refundOrder"),
	q("what's the weather going to be like this weekend in Paris", "weather/get_forecast"),
	q("translate this paragraph into Japanese", "translate/translate_text"),
	q("who is on call right now", "oncall/list_oncalls"),
	q("move ENG-42 to in progress", "tracker/transitionIssue"),
	q("create a new bucket for backups", "cloud/create_bucket"),
	q("directions to the airport by train", "maps/get_directions"),
	q("page the on-call engineer about the outage", "oncall/create_incident"),
	q("list unresolved errors in the checkout service", "crashes/list_issues"),
	q("mute the disk space alert until tomorrow", "monitor/mute_monitor"),
	q("add a task to buy milk tomorrow", "todo/add_task", "todo/quick_add"),
	q("play some jazz", "music/play", "music/search"),
	q("find a cheap flight from Berlin to Lisbon next Friday", "travel/search_flights"),
	q("scan this receipt and file it as an expense", "expenses/scan_receipt"),
	q("merge these three PDFs into one file", "pdf/merge_pdfs"),
	q("remove the background from my profile photo", "images/remove_background"),
	q("turn off the living room lights", "home/turn_off"),
	q("what changed in my working copy", "git/git_status", "git/git_diff"),
	q("commit my staged changes with message fix typo", "git/git_commit"),
	q("search the web for the latest go release notes", "web/web_search"),
	q("get the transcript of this youtube video", "video/get_transcript"),
	q("post a tweet announcing our launch", "social/create_post"),
	q("what are today's top tech headlines", "news/top_headlines"),
	q("book a hotel in Rome for three nights", "travel/search_hotels", "travel/book_hotel"),
	q("how much vacation do I have left", "hr/get_time_off_balance"),
	q("show me last quarter's profit and loss", "accounting/get_profit_and_loss"),
	q("how many people are on the website right now", "analytics/get_realtime_users"),
	q("point www at 203.0.113.7", "dns/create_dns_record", "dns/update_dns_record"),
	q("purge the CDN cache for the homepage", "dns/purge_cache"),
	q("set session:42 to expire in an hour", "cache/expire"),
	q("count the documents in the users collection where plan is pro", "mongo/count"),
	q("run terraform plan for staging", "infra/plan"),
	q("read the database password secret", "vault/read_secret"),
	q("reset MFA for alice, she lost her phone", "identity/reset_mfa"),
	q("schedule a video call with the design team on Monday at 10", "meet/createMeeting", "calendar/create_event"),
	q("export the login screen frame as PNG", "design/exportImages"),
	q("write a wiki page with the retro notes", "wiki/create_page", "wiki/create_page_from_template"),
	q("share the Q3 budget spreadsheet with bob", "drive/shareFile"),
	q("list the pods that keep crashing in production", "k8s/list_pods"),
	q("show the logs of the nginx container", "docker/container_logs", "k8s/get_pod_logs"),
	q("text the delivery driver that I'm running late", "sms/send_sms"),
	q("email Sarah the meeting notes", "mail/send_email"),
	q("unread emails from my boss", "mail/search_emails", "mail/list_unread"),
	q("approve the pending expense report from Tom", "expenses/approve_report"),
	q("who reports to Maria", "hr/get_org_chart"),
	q("which pages of our site get the most traffic", "analytics/get_top_pages"),
	q("how many units of the blue t-shirt are in stock", "shop/getInventoryLevels"),
	q("give the customer a 20% discount code", "shop/createDiscountCode", "payments/create_coupon"),
	q("reply to the customer's support ticket", "helpdesk/reply_to_ticket"),
	q("convert this lead into an opportunity", "crm/convert_lead"),
	q("what's the air quality today", "weather/get_air_quality"),
	q("find coffee shops near me that are open now", "maps/search_places", "maps/nearby_search"),
	q("how far is it from Munich to Vienna by car", "maps/get_directions", "maps/distance_matrix"),
	q("who changed this line of the file", "git/git_blame"),
	q("check if example.com is down", "web/check_website_status"),
	q("free up disk space used by docker", "docker/system_prune"),
	q("generate an image of a cat astronaut", "images/generate_image"),
	q("summarize this PDF", "pdf/summarize_pdf"),
	q("rotate the database credentials", "vault/rotate_credentials"),
	q("add bob to the engineering group", "identity/add_user_to_group"),
	q("what did I listen to recently", "music/getRecentlyPlayed"),
	q("find my notes about the kubernetes migration", "notes/search_notes"),
	q("when is Anna's birthday", "contacts/get_birthdays", "contacts/find_contact"),

	// Added with the no-shared-word figures, written before any of them
	// was searched for (the ranker was not changed afterwards): requests
	// that share no word with the name of a tool that answers them.
	q("is it going to rain in the next few hours", "weather/get_hourly_forecast", "weather/get_precipitation_radar"),
	q("make sure the front entrance is secured", "home/lock_door", "home/arm_alarm"),
	q("how much have we spent on AWS this month", "cloud/get_cost_and_usage"),
	q("kick off the nightly build again", "ci/trigger_pipeline", "ci/retry_job"),
	q("which colleagues are away on leave this week", "hr/whos_out", "hr/list_time_off_requests"),
	q("what's the name of the track on right now", "music/getCurrentlyPlaying"),
	q("how many yen is 50 euros", "travel/convert_currency"),
	q("stop this address from reaching my inbox", "mail/block_sender", "mail/create_filter"),
	q("make the picture smaller so it fits in an email", "images/resize_image", "images/compress_image"),
	q("who has access to the roadmap doc", "drive/listPermissions"),
	q("go back to the previous version of the api service in the cluster", "k8s/rollout_undo", "ci/rollback_deployment"),
	q("when does the next S-Bahn leave from Alexanderplatz", "maps/get_transit_departures"),
	q("is my passport enough to enter Japan", "travel/get_visa_requirements"),
}
