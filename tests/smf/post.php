<?php
/**
 * post.php — Narrador's SMF test helper: add posts with given bodies to a topic through SMF's
 * own createPost() (no HTTP, no flood wait), as a member, one body per line of stdin (a line's
 * "\n" stands for a new line). Prints each new message id.
 *   php post.php <www dir> <topic> <member name> < bodies.txt
 * For the long tagged threads of tests/e2e/test_smf_live.py (the kit's fill.php writes only
 * its own text).
 */
if (PHP_SAPI !== 'cli') { http_response_code(403); exit; }
list(, $www, $postTopic, $member) = $argv + array(null, null, null, 'jugadora');
chdir($www);
$_SERVER['REMOTE_ADDR'] = '127.0.0.1'; $_SERVER['HTTP_HOST'] = '127.0.0.1';
$_SERVER['REQUEST_METHOD'] = 'GET'; $_SERVER['REQUEST_URI'] = '/SSI.php'; $_SERVER['SCRIPT_NAME'] = '/SSI.php';
$ssi_guest_access = true;
error_reporting(E_ALL & ~E_DEPRECATED & ~E_NOTICE & ~E_WARNING);
require_once($www . '/SSI.php');
global $smcFunc, $sourcedir, $user_info;
require_once($sourcedir . '/Subs-Post.php');
$user_info['query_see_board'] = '1=1';
$r = $smcFunc['db_query']('', 'SELECT id_member, real_name, email_address FROM {db_prefix}members WHERE member_name = {string:n}', array('n' => $member));
$row = $smcFunc['db_fetch_row']($r);
if (!$row) { fwrite(STDERR, "post: no member $member\n"); exit(1); }
list($idMember, $realName, $email) = $row;
$r = $smcFunc['db_query']('', 'SELECT t.id_board, m.subject FROM {db_prefix}topics AS t
	JOIN {db_prefix}messages AS m ON (m.id_msg = t.id_first_msg) WHERE t.id_topic = {int:topic}', array('topic' => (int) $postTopic));
$row = $smcFunc['db_fetch_row']($r);
if (!$row) { fwrite(STDERR, "post: no topic $postTopic\n"); exit(1); }
list($idBoard, $subject) = $row;
$count = 0;
while (($line = fgets(STDIN)) !== false && $count < 5000) {
	$body = str_replace('\n', "\n", rtrim($line, "\r\n"));
	if ($body === '') continue;
	$count++;
	$msgOptions = array('subject' => 'Re: ' . $subject, 'body' => $smcFunc['htmlspecialchars']($body, ENT_QUOTES),
		'icon' => 'xx', 'smileys_enabled' => true, 'approved' => true);
	$topicOptions = array('id' => (int) $postTopic, 'board' => (int) $idBoard, 'mark_as_read' => false);
	$posterOptions = array('id' => (int) $idMember, 'name' => $realName, 'email' => $email, 'ip' => '127.0.0.1', 'update_post_count' => true);
	createPost($msgOptions, $topicOptions, $posterOptions);
	echo $msgOptions['id'], "\n";
}
