<!-- /login is not an editable template: the form follows the fields of Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/mod_login.tpl and what live clients send (username, password, autologin, login, hidden redirect) -->
<form action="/login" method="post" name="form_login">
<table class="forumline" width="100%" cellspacing="1" cellpadding="4" border="0">
<tr><th class="thHead" colspan="2" height="25" nowrap="nowrap">Conectarse</th></tr>
{ERROR_BOX}
<tr><td class="row1" width="45%" align="right"><span class="gen">Nombre de usuario:</span></td>
<td class="row2"><input class="post" type="text" name="username" size="25" maxlength="40" value="" /></td></tr>
<tr><td class="row1" align="right"><span class="gen">Contraseña:</span></td>
<td class="row2"><input class="post" type="password" name="password" size="25" maxlength="32" /></td></tr>
<!-- BEGIN switch_captcha --><tr><td class="row1" colspan="2" align="center"><div class="g-recaptcha" data-sitekey="6Lc-test"></div></td></tr><!-- END switch_captcha -->
<tr><td class="row1" colspan="2" align="center"><span class="gen">Conectarse automáticamente en cada visita: <input type="checkbox" name="autologin" checked="checked" /></span><br />
{S_HIDDEN_FIELDS}<input type="submit" name="login" class="mainoption" value="{L_LOGIN}" /></td></tr>
</table>
</form>
