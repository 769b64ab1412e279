<?php
/**
 * Make a board of a test forum from the kit (../shared/forums/mybb) members-only, or open it
 * to guests again, the way MyBB's Admin CP does (Forums > Permissions > Guests):
 *   php guests.php DOCROOT FID 0   # guests (usergroup 1) cannot view the board
 *   php guests.php DOCROOT FID 1   # back to the usergroup defaults (no permission row)
 * Boots MyBB (inc/init.php), writes mybb_forumpermissions and rebuilds MyBB's own
 * forumpermissions cache ($cache->update_forumpermissions()). Exit 2 on bad arguments.
 */
if(PHP_SAPI !== 'cli') { exit(1); }
if($argc != 4 || !ctype_digit($argv[2]) || !in_array($argv[3], array('0', '1'), true))
{
	fwrite(STDERR, "usage: php guests.php DOCROOT FID 0|1\n");
	exit(2);
}
$docroot = rtrim($argv[1], '/');
define('IN_MYBB', 1);
define('NO_ONLINE', 1);
define('THIS_SCRIPT', 'guests.php');
$_SERVER['REMOTE_ADDR'] = '127.0.0.1';
chdir($docroot);
require_once $docroot.'/inc/init.php';
$fid = (int)$argv[2];
$db->delete_query('forumpermissions', "fid='{$fid}' AND gid='1'");
if($argv[3] === '0')
{
	$db->insert_query('forumpermissions', array('fid' => $fid, 'gid' => 1, 'canview' => 0, 'canviewthreads' => 0));
}
$cache->update_forumpermissions();
echo "forum {$fid}: guests ".($argv[3] === '0' ? 'cannot' : 'can')." view\n";
