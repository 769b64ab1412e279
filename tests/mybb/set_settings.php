<?php
/**
 * Change MyBB settings of a test forum from the kit (../shared/forums/mybb), for tests that
 * need a setting the kit's seed turns off (flood check, merging of consecutive posts):
 *   php set_settings.php DOCROOT name=value [name=value ...]
 * Boots MyBB (inc/init.php), updates mybb_settings and regenerates inc/settings.php with
 * MyBB's own rebuild_settings(), exactly as the kit's seed.php does. Prints one line per
 * setting changed. Exit 2 on bad arguments, 3 on an unknown setting.
 */
if(PHP_SAPI !== 'cli') { exit(1); }
if($argc < 3) { fwrite(STDERR, "usage: php set_settings.php DOCROOT name=value...\n"); exit(2); }
$docroot = rtrim($argv[1], '/');
define('IN_MYBB', 1);
define('NO_ONLINE', 1);
define('THIS_SCRIPT', 'set_settings.php');
$_SERVER['REMOTE_ADDR'] = '127.0.0.1';
chdir($docroot);
require_once $docroot.'/inc/init.php';
for($i = 2; $i < $argc; $i++)
{
	$pair = explode('=', $argv[$i], 2);
	if(count($pair) != 2) { fwrite(STDERR, "bad argument {$argv[$i]}\n"); exit(2); }
	list($name, $value) = $pair;
	$q = $db->simple_select('settings', 'sid', "name='".$db->escape_string($name)."'");
	if(!$db->fetch_field($q, 'sid')) { fwrite(STDERR, "unknown setting $name\n"); exit(3); }
	$db->update_query('settings', array('value' => $db->escape_string($value)), "name='".$db->escape_string($name)."'");
	echo "$name=$value\n";
}
rebuild_settings();
